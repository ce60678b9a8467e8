import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/**
 * The module-boundary rules (eslint.boundaries.mjs, spread into eslint.config.mjs) fire on a deliberately wrong import
 * and stay quiet on the right one. The fixtures are linted as text under paths inside src/, never written there.
 */
const ROOT = join(__dirname, '..', '..');

interface Fixture {
  filePath: string;
  code: string;
}
interface LintMessage {
  ruleId: string | null;
  message: string;
}

/**
 * ESLint's Node API (`new ESLint({ overrideConfigFile })`, `lintText`) in a node process of its own: ESLint loads its
 * ESM config file with a dynamic import, which jest's module sandbox does not allow.
 */
function lintTexts(cwd: string, configFile: string, fixtures: Fixture[]): LintMessage[][] {
  const script = `
    import { ESLint } from ${JSON.stringify(require.resolve('eslint'))};
    let input = '';
    for await (const chunk of process.stdin) input += chunk;
    const { cwd, configFile, fixtures } = JSON.parse(input);
    const eslint = new ESLint({ cwd, overrideConfigFile: configFile });
    const out = [];
    for (const { filePath, code } of fixtures) {
      const [result] = await eslint.lintText(code, { filePath });
      out.push(result.messages.map(({ ruleId, message }) => ({ ruleId, message })));
    }
    process.stdout.write(JSON.stringify(out));`;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd,
    input: JSON.stringify({ cwd, configFile, fixtures }),
    encoding: 'utf8',
  });
  if (run.status !== 0) {
    throw new Error(`eslint failed: ${run.stderr}`);
  }
  return JSON.parse(run.stdout) as LintMessage[][];
}

const lines = (...code: string[]) => [...code, ''].join('\n');

describe('module boundaries (lint)', () => {
  const fixtures = {
    wrong: {
      filePath: 'src/subscribers/boundary-fixture.ts',
      code: lines(
        "import { InvoicesService } from '../billing/invoices/invoices.service';",
        'export const x = InvoicesService;',
      ),
    },
    wrongDeep: {
      filePath: 'src/billing/invoices/boundary-fixture.ts',
      code: lines(
        "import { Subscriber } from '../../subscribers/subscriber.entity';",
        "import { EventsService } from 'src/events/events.service';",
        'export const x = [Subscriber, EventsService];',
      ),
    },
    right: {
      filePath: 'src/subscribers/boundary-fixture.ts',
      code: lines(
        "import { BillingModule } from '../billing';",
        "import { EventsService } from '../events/index';",
        "import { SubscribersService } from './subscribers.service';",
        "import { ApiError } from '../common/errors/api-error';",
        'export const x = [BillingModule, EventsService, SubscribersService, ApiError];',
      ),
    },
    ownEntry: {
      filePath: 'src/billing/invoices/boundary-fixture.ts',
      code: lines(
        "import { BillingModule } from '..';",
        "import { LedgerService } from '../ledger/ledger.service';",
        'export const x = [BillingModule, LedgerService];',
      ),
    },
    shared: {
      filePath: 'src/common/boundary-fixture.ts',
      code: lines(
        "import { GatewayModule } from '../gateway';",
        "import { Webhook } from '../webhooks/webhook.entity';",
        'export const x = [GatewayModule, Webhook];',
      ),
    },
    registry: {
      filePath: 'src/database/entities.ts',
      code: lines(
        "import { Subscriber } from '../subscribers/subscriber.entity';",
        "import { SubscribersService } from '../subscribers/subscribers.service';",
        'export const x = [Subscriber, SubscribersService];',
      ),
    },
    wiring: {
      filePath: 'src/app-fixture.ts',
      code: lines(
        "import { BillingModule } from './billing/billing.module';",
        "import { SubscribersModule } from './subscribers';",
        'export const x = [BillingModule, SubscribersModule];',
      ),
    },
  };
  const errors: Record<string, string[]> = {};

  beforeAll(() => {
    const names = Object.keys(fixtures) as (keyof typeof fixtures)[];
    const results = lintTexts(
      ROOT,
      join(ROOT, 'eslint.boundaries.mjs'),
      names.map((name) => ({ ...fixtures[name], filePath: join(ROOT, fixtures[name].filePath) })),
    );
    names.forEach((name, i) => {
      // Only the import rules: whether these fixture domains form a cycle today depends on the code around them.
      errors[name] = results[i].filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
    });
  });

  it('rejects a domain importing a file inside another domain', () => {
    expect(errors.wrong).toEqual([
      expect.stringMatching(/billing is used only through its public entry src\/billing\/index\.ts/),
    ]);
  });

  it('rejects it from a subfolder, and through the src/ base path', () => {
    expect(errors.wrongDeep).toEqual([
      expect.stringMatching(/subscribers is used only through its public entry src\/subscribers\/index\.ts/),
      expect.stringMatching(/events is used only through its public entry src\/events\/index\.ts/),
    ]);
  });

  it("accepts another domain's public entry, and the domain's own and shared files", () => {
    expect(errors.right).toEqual([]);
  });

  it('rejects a domain importing its own entry, and accepts its own files', () => {
    expect(errors.ownEntry).toEqual([
      expect.stringMatching(/Inside src\/billing, import its files directly, never its own entry/),
    ]);
  });

  it('rejects shared infrastructure importing a domain, even through its entry', () => {
    expect(errors.shared).toEqual([
      expect.stringMatching(/src\/common is shared infrastructure and imports no domain \(gateway\)/),
      expect.stringMatching(/src\/common is shared infrastructure and imports no domain \(webhooks\)/),
    ]);
  });

  it("lets the entity registry import a domain's *.entity files, and nothing else of it", () => {
    expect(errors.registry).toEqual([expect.stringMatching(/imports only a domain's \*\.entity files/)]);
  });

  it('holds the wiring at the top of src/ to the public entries too', () => {
    expect(errors.wiring).toEqual([
      expect.stringMatching(/billing is used only through its public entry src\/billing\/index\.ts/),
    ]);
  });

  describe('cycles between domains (house/no-domain-cycle)', () => {
    let base: string;
    let cycle: LintMessage[];
    let typeOnly: LintMessage[];

    beforeAll(() => {
      base = mkdtempSync(join(tmpdir(), 'boundaries-'));
      const src = join(base, 'src');
      const write = (path: string, text: string) => {
        mkdirSync(dirname(join(src, path)), { recursive: true });
        writeFileSync(join(src, path), text);
      };
      write('alpha/index.ts', lines("export * from './alpha.service';"));
      write('alpha/alpha.service.ts', lines("import { Beta } from '../beta';", 'export const alpha = Beta;'));
      write('alpha/types.ts', lines("import type { Gamma } from '../gamma';", 'export type G = Gamma;'));
      write('beta/index.ts', lines('export class Beta {}'));
      write('gamma/index.ts', lines('export type Gamma = string;'));
      // The rule from the real config file, pointed at this tree.
      const config = join(base, 'eslint.config.mjs');
      writeFileSync(
        config,
        lines(
          `import tseslint from ${JSON.stringify(require.resolve('typescript-eslint'))};`,
          `import { housePlugin } from ${JSON.stringify(join(ROOT, 'eslint.boundaries.mjs'))};`,
          'export default [{',
          "  files: ['**/*.ts'],",
          '  languageOptions: { parser: tseslint.parser },',
          '  plugins: { house: housePlugin },',
          `  rules: { 'house/no-domain-cycle': ['error', { domains: ['alpha', 'beta', 'gamma'] }] },`,
          '}];',
        ),
      );
      [cycle, typeOnly] = lintTexts(base, config, [
        {
          filePath: join(src, 'beta/uses-alpha.ts'),
          code: lines("import { alpha } from '../alpha';", 'export const b = alpha;'),
        },
        {
          filePath: join(src, 'gamma/uses-alpha.ts'),
          code: lines("import { alpha } from '../alpha';", 'export const g = alpha;'),
        },
      ]);
    });
    afterAll(() => rmSync(base, { recursive: true, force: true }));

    it('rejects an import that closes a cycle, naming it', () => {
      expect(cycle.map((m) => m.message)).toEqual([
        'beta imports alpha, which imports beta back (beta → alpha → beta; e.g. alpha/alpha.service.ts): a cycle between domains.',
      ]);
    });

    it('accepts an import whose only way back is type-only (erased at run time)', () => {
      expect(typeOnly).toEqual([]);
    });
  });
});
