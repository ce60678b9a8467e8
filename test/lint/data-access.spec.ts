import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/**
 * `npm run lint:data-access` (scripts/check-data-access.sh, then scripts/check-data-access.js) run on small trees of
 * its own: a docs/architecture.md whose "Owns (tables)" column says which folder owns which table, and src/ files that
 * write tables from the owner's folder, from another one, and to a table no row owns, and that read other modules'
 * tables through what the owner's index.ts exports or around it.
 */
const SCRIPT = join(__dirname, '..', '..', 'scripts', 'check-data-access.sh');

const lines = (...code: string[]) => [...code, ''].join('\n');

type Tree = Record<string, string>;

const DOC_HEAD = [
  '# Architecture',
  '',
  '| Module | Owns (tables) | Emits | May call |',
  '| --- | --- | --- | --- |',
];

/** A tree in which every table is written from its owner's folder. */
const good: Tree = {
  'docs/architecture.md': lines(
    ...DOC_HEAD,
    '| alpha | `alphas` | `alpha.created` | events |',
    '| billing | per sub-folder: `invoices/`: `invoices`, `invoice_counters`; `runs/`: `billing_runs` | none | alpha |',
    '| cli | none | none | alpha |',
    '',
    'Prose after the table: `not_a_table` is not read.',
  ),
  'src/alpha/alpha.entity.ts': lines("@Entity('alphas')", 'export class Alpha {}'),
  'src/alpha/alpha.repository.ts': lines(
    "import { Alpha as AlphaRow } from './alpha.entity';",
    'export class AlphaRepository {',
    '  async insert(manager: EntityManager, row: AlphaRow) {',
    '    await manager.insert(AlphaRow, row);',
    "    await manager.query('UPDATE alphas a SET name = $2 WHERE a.id = $1', [row.id, row.name]);",
    '  }',
    '}',
  ),
  'src/billing/invoices/invoice.entity.ts': lines(
    "@Entity('invoices')",
    'export class Invoice {}',
    "@Entity({ name: 'invoice_counters' })",
    'export class InvoiceCounter {}',
  ),
  'src/billing/invoices/invoices.repository.ts': lines(
    "import { Invoice } from './invoice.entity';",
    'export class InvoicesRepository {',
    '  async insert(manager: EntityManager, invoice: Invoice) {',
    '    await manager.insert(Invoice, invoice);',
    '    await manager.query(',
    '      `INSERT INTO invoice_counters (tenant_id, last_number) VALUES ($1, 1)',
    '       ON CONFLICT (tenant_id) DO UPDATE SET last_number = invoice_counters.last_number + 1`,',
    '    );',
    '  }',
    '}',
  ),
  'src/billing/runs/billing-run.entity.ts': lines("@Entity('billing_runs')", 'export class BillingRun {}'),
  'src/billing/runs/billing-runs.repository.ts': lines(
    "import { BillingRun } from './billing-run.entity';",
    'export class BillingRunsRepository {',
    '  async finish(manager: EntityManager, id: string) {',
    "    await manager.createQueryBuilder().update(BillingRun).set({ status: 'completed' }).where({ id }).execute();",
    '    // INSERT INTO invoices: a comment is not a write',
    "    await manager.query('SELECT id FROM invoices FOR UPDATE');",
    '  }',
    '}',
  ),
  'src/billing/runs/dto/run.dto.ts': lines(
    "export const description = 'Update the billing set of a run, or delete from it what it no longer bills.';",
  ),
  'src/database/migrations/1-Init.ts': lines(
    'export class Init1 {',
    '  async up(queryRunner: QueryRunner) {',
    '    await queryRunner.query(`CREATE TABLE "alphas" ("id" text PRIMARY KEY)`);',
    '    await queryRunner.query(`CREATE TABLE IF NOT EXISTS "legacy" ("id" text PRIMARY KEY)`);',
    '  }',
    '  async down(queryRunner: QueryRunner) {',
    '    await queryRunner.query(`DROP TABLE "alphas"`);',
    '  }',
    '}',
  ),
  'src/database/migrations/2-DropLegacy.ts': lines(
    'export class DropLegacy2 {',
    '  async up(queryRunner: QueryRunner) {',
    '    await queryRunner.query(\'DROP TABLE "legacy"\');',
    '  }',
    '}',
  ),
};

/** The same tree with wrong writes and a doc that owns a table twice and misses one. */
const bad: Tree = {
  ...good,
  'docs/architecture.md': lines(
    ...DOC_HEAD,
    '| alpha | `alphas`, `shared` | `alpha.created` | events |',
    '| billing | per sub-folder: `invoices/`: `invoices`, `invoice_counters`; `runs/`: `billing_runs`, `shared` | none | alpha |',
    '| beta | `Not A Table` | none | alpha |',
  ),
  'src/database/rows.ts': lines(
    'export function insertRows(entity: unknown, table: string): string {',
    '  return `INSERT INTO ${table} SELECT * FROM jsonb_populate_recordset(NULL, $1)`;',
    '}',
  ),
  'src/database/migrations/3-Orphans.ts': lines(
    'const TABLES = [',
    "  ['orphans', 'id'],",
    '];',
    'export class Orphans3 {',
    '  async up(queryRunner: QueryRunner) {',
    '    for (const [table, key] of TABLES) {',
    '      await queryRunner.query(`CREATE TABLE "${table}" ("${key}" text PRIMARY KEY)`);',
    '    }',
    '  }',
    '}',
  ),
  'src/billing/runs/billing-runs.repository.ts': lines(
    "import { Alpha } from '../../alpha';",
    "import { insertRows } from '../../database/rows';",
    "import { Invoice } from '../invoices/invoice.entity';",
    "import { BillingRun } from './billing-run.entity';",
    "const INSERT_INVOICES = insertRows(Invoice, 'invoices');",
    'export class BillingRunsRepository {',
    '  async bill(manager: EntityManager, invoices: Invoice[]) {',
    "    await manager.createQueryBuilder().update(BillingRun).set({ status: 'completed' }).execute();",
    '    await manager.query(INSERT_INVOICES, [JSON.stringify(invoices)]);',
    '    await manager.insert(Invoice, invoices);',
    '    await manager.query(',
    "      'INSERT INTO invoice_counters (tenant_id, last_number) VALUES ($1, $2) ' +",
    "        'ON CONFLICT (tenant_id) DO UPDATE SET last_number = invoice_counters.last_number + EXCLUDED.last_number',",
    '    );',
    "    await manager.getRepository(Alpha).createQueryBuilder().delete().where('id = :id').execute();",
    "    await manager.query('INSERT INTO mystery (id) VALUES ($1)');",
    "    for (const table of ['alphas', 'invoices']) {",
    '      await manager.query(`DELETE FROM ${table} WHERE tenant_id = $1`);',
    '    }',
    '    await manager.save(invoices[0]);',
    '  }',
    '}',
  ),
  'src/beta/beta.service.ts': lines(
    'export class BetaService {',
    '  async purge() {',
    "    await this.dataSource.query('DELETE FROM alphas');",
    '  }',
    '}',
  ),
};

/**
 * Modules reading each other's tables: beta through what alpha's index.ts exports (its repository, and the fragment
 * `alphasTable` for a join in one statement) and not (SQL naming alphas, TypeORM on alpha's entity); billing's
 * sub-folders reading each other's tables (one module).
 */
const reads: Tree = {
  'docs/architecture.md': lines(
    ...DOC_HEAD,
    '| alpha | `alphas` | none | events |',
    '| beta | `betas` | none | alpha |',
    '| billing | per sub-folder: `invoices/`: `invoices`; `runs/`: `billing_runs` | none | alpha |',
  ),
  'src/alpha/alpha.entity.ts': lines("@Entity('alphas')", 'export class Alpha {}'),
  'src/alpha/alpha.repository.ts': lines(
    "import { Alpha } from './alpha.entity';",
    'export const alphasTable = (alias: string): string => `alphas ${alias}`;',
    "export const ALPHAS = 'alphas';",
    'export class AlphaRepository {',
    '  names(manager: EntityManager, ids: string[]) {',
    "    return manager.query('SELECT name FROM alphas WHERE id = ANY($1)', [ids]);",
    '  }',
    '  byId(manager: EntityManager, id: string) {',
    '    return manager.findOneBy(Alpha, { id });',
    '  }',
    '}',
  ),
  'src/alpha/index.ts': lines(
    "export { Alpha } from './alpha.entity';",
    "export { AlphaRepository, alphasTable, ALPHAS } from './alpha.repository';",
  ),
  'src/beta/beta.entity.ts': lines("@Entity('betas')", 'export class Beta {}'),
  'src/beta/beta.repository.ts': lines(
    "import { Alpha, ALPHAS, alphasTable } from '../alpha';",
    'export class BetaRepository {',
    '  constructor(@InjectRepository(Alpha) private readonly alphas: Repository<Alpha>) {}',
    '  async read(manager: EntityManager) {',
    "    await manager.query(`SELECT b.id FROM betas b JOIN ${alphasTable('a')} ON a.id = b.alpha_id`);",
    "    await manager.query('SELECT x.id FROM jsonb_to_recordset($1) AS x(id text) JOIN betas b ON b.id = x.id');",
    "    await manager.query('SELECT name FROM alphas WHERE id = $1');",
    '    await manager.query(`SELECT b.id FROM betas b',
    '      LEFT JOIN alphas a ON a.id = b.alpha_id`);',
    "    await manager.query('SELECT b.id FROM betas b, alphas a WHERE a.id = b.alpha_id');",
    "    await manager.query('SELECT id FROM betas WHERE EXISTS (SELECT 1 FROM alphas)');",
    '    await manager.query(`SELECT count(*) FROM ${ALPHAS}`);',
    '    await manager.findOneBy(Alpha, { id: 1 });',
    "    await manager.createQueryBuilder(Alpha, 'a').getMany();",
    "    await manager.query('UPDATE betas SET n = 1 FROM alphas a WHERE a.id = betas.alpha_id');",
    '  }',
    '}',
  ),
  'src/billing/invoices/invoice.entity.ts': lines("@Entity('invoices')", 'export class Invoice {}'),
  'src/billing/runs/billing-run.entity.ts': lines("@Entity('billing_runs')", 'export class BillingRun {}'),
  'src/billing/runs/billing-runs.repository.ts': lines(
    "import { Invoice } from '../invoices/invoice.entity';",
    'export class BillingRunsRepository {',
    '  async issued(manager: EntityManager) {',
    "    await manager.query('SELECT r.id FROM billing_runs r JOIN invoices i ON i.run_id = r.id');",
    '    await manager.find(Invoice, { where: { runId: 1 } });',
    '  }',
    '}',
  ),
};

function run(tree: Tree): { status: number | null; out: string[] } {
  const root = mkdtempSync(join(tmpdir(), 'data-access-'));
  try {
    for (const [path, text] of Object.entries(tree)) {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), text);
    }
    const result = spawnSync('bash', [SCRIPT, root], { encoding: 'utf8' });
    return { status: result.status, out: result.stdout.split('\n').filter(Boolean) };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/** `path:line` of the first line of `tree[path]` holding `text`. */
function at(tree: Tree, path: string, text: string): string {
  const index = tree[path].split('\n').findIndex((line) => line.includes(text));
  if (index < 0) {
    throw new Error(`${text} is not in ${path}`);
  }
  return `${path}:${index + 1}`;
}

describe('table ownership (lint:data-access)', () => {
  it('passes when every table is written from the folder that owns it', () => {
    const { status, out } = run(good);
    expect(out).toEqual([
      'check-data-access: no SQL or TypeORM call outside repositories and src/database.',
      'check-data-access: 5 write(s), each from the folder that owns its table, and 1 read(s), each from the module that owns its table (docs/architecture.md).',
    ]);
    expect(status).toBe(0);
  });

  it('fails on writes from outside the owner, to a table no row owns, and on a doc that is not one owner per table', () => {
    const { status, out } = run(bad);
    const runs = 'src/billing/runs/billing-runs.repository.ts';
    const doc = 'docs/architecture.md';
    const line = (text: string) => at(bad, runs, text);
    expect(out).toEqual([
      `${at(bad, 'src/beta/beta.service.ts', 'DELETE FROM')}:    await this.dataSource.query('DELETE FROM alphas');`,
      `note: ${doc} owns tables no entity or migration creates yet: shared.`,
      `${doc}:7: \`Not A Table\` in the "Owns (tables)" column is neither a table nor a sub-folder (\`name/\`).`,
      `${doc}:6: \`shared\` has more than one owner (src/alpha, src/billing/runs); a table has one.`,
      `${doc}: no row owns \`orphans\` (src/database/migrations/3-Orphans.ts:7); add it to one module's "Owns (tables)".`,
      `src/beta/beta.service.ts:3: DELETE FROM alphas, which src/alpha owns (${doc}): write it through src/alpha.`,
      `${line('insertRows(Invoice')}: INSERT INTO invoices (SQL at src/database/rows.ts:2), which src/billing/invoices owns (${doc}): write it through src/billing/invoices.`,
      `${line('manager.insert(Invoice')}: TypeORM .insert() invoices, which src/billing/invoices owns (${doc}): write it through src/billing/invoices.`,
      `${line("'INSERT INTO invoice_counters")}: INSERT INTO invoice_counters, which src/billing/invoices owns (${doc}): write it through src/billing/invoices.`,
      `${line('getRepository(Alpha)')}: TypeORM .delete() alphas, which src/alpha owns (${doc}): write it through src/alpha.`,
      `${line('INSERT INTO mystery')}: INSERT INTO mystery, a table no row of ${doc} owns.`,
      `${line('DELETE FROM ${table}')}: DELETE FROM alphas, which src/alpha owns (${doc}): write it through src/alpha.`,
      `${line('DELETE FROM ${table}')}: DELETE FROM invoices, which src/billing/invoices owns (${doc}): write it through src/billing/invoices.`,
      `${line('manager.save(')}: TypeORM .save() on a table the check cannot tell; name it literally or by its entity class.`,
    ]);
    expect(status).toBe(1);
  });

  it("fails on a read of another module's table that does not go through what its index.ts exports", () => {
    const { status, out } = run(reads);
    const beta = 'src/beta/beta.repository.ts';
    const line = (text: string) => at(reads, beta, text);
    const owned = `reads a table of src/alpha (docs/architecture.md): call what src/alpha/index.ts exports instead.`;
    expect(out).toEqual([
      'check-data-access: no SQL or TypeORM call outside repositories and src/database.',
      `${line('@InjectRepository(Alpha)')}: TypeORM @InjectRepository() alphas ${owned}`,
      `${line("'SELECT name FROM alphas")}: FROM alphas ${owned}`,
      `${line('LEFT JOIN alphas')}: JOIN alphas ${owned}`,
      `${line('FROM betas b, alphas a')}: FROM …, alphas ${owned}`,
      `${line('SELECT 1 FROM alphas')}: FROM alphas ${owned}`,
      `${line('FROM ${ALPHAS}')}: FROM alphas ${owned}`,
      `${line('findOneBy(Alpha')}: TypeORM .findOneBy() alphas ${owned}`,
      `${line('createQueryBuilder(Alpha')}: TypeORM .createQueryBuilder() alphas ${owned}`,
      `${line('UPDATE betas SET n = 1 FROM alphas')}: FROM alphas ${owned}`,
    ]);
    expect(status).toBe(1);
  });

  it("passes reads through the owner's index.ts, and any billing folder reading billing's tables", () => {
    const throughOwner: Tree = {
      ...reads,
      'src/beta/beta.repository.ts': lines(
        "import { alphasTable } from '../alpha';",
        'export class BetaRepository {',
        '  async read(manager: EntityManager) {',
        "    await manager.query(`SELECT b.id FROM betas b JOIN ${alphasTable('a')} ON a.id = b.alpha_id`);",
        "    await manager.query('SELECT x.id FROM jsonb_to_recordset($1) AS x(id text) JOIN betas b ON b.id = x.id');",
        '  }',
        '}',
      ),
      'src/beta/beta.service.ts': lines(
        "import { AlphaRepository } from '../alpha';",
        'export class BetaService {',
        '  constructor(private readonly alphas: AlphaRepository) {}',
        '  names(ids: string[]) {',
        '    return this.alphas.names(this.dataSource.manager, ids);',
        '  }',
        '}',
      ),
    };
    const { status, out } = run(throughOwner);
    expect(out).toEqual([
      'check-data-access: no SQL or TypeORM call outside repositories and src/database.',
      'check-data-access: 0 write(s), each from the folder that owns its table, and 7 read(s), each from the module that owns its table (docs/architecture.md).',
    ]);
    expect(status).toBe(0);
  });
});
