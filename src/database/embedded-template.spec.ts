import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TEMPLATE_MANIFEST, TEMPLATE_PGDATA, templateKey, usableTemplate } from './embedded-template';

describe('embedded database template', () => {
  let root: string;
  beforeEach(() => (root = mkdtempSync(join(tmpdir(), 'isp-api-template-'))));
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  function migrationsDir(): string {
    const dir = join(root, 'migrations');
    cpSync(join(__dirname, 'migrations'), dir, { recursive: true });
    return dir;
  }

  function template(key: string, withVersion = true): string {
    const dir = join(root, 'template');
    mkdirSync(join(dir, TEMPLATE_PGDATA), { recursive: true });
    if (withVersion) {
      writeFileSync(join(dir, TEMPLATE_PGDATA, 'PG_VERSION'), '17\n');
    }
    writeFileSync(join(dir, TEMPLATE_MANIFEST), JSON.stringify({ key, pglite: 'x', migrations: [] }));
    return dir;
  }

  it('should key the template by the migrations this code runs', () => {
    const dir = migrationsDir();
    expect(templateKey(dir)).toBe(templateKey(join(__dirname, 'migrations')));
    expect(templateKey(dir)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('should give another key when a migration is changed in place, added or removed', () => {
    const dir = migrationsDir();
    const before = templateKey(dir);
    const file = join(dir, '1795235342641-Foundation.ts');
    writeFileSync(file, `${readFileSync(file, 'utf8')}\n// changed\n`);
    const changed = templateKey(dir);
    expect(changed).not.toBe(before);

    writeFileSync(join(dir, '1799999999999-Later.ts'), 'export class Later1799999999999 {}\n');
    const added = templateKey(dir);
    expect(added).not.toBe(changed);

    rmSync(join(dir, '1799999999999-Later.ts'));
    rmSync(join(dir, '1796750000000-PortalEmail.ts'));
    expect(templateKey(dir)).not.toBe(changed);
  });

  it('should not let a map or declaration file beside the migrations change the key', () => {
    const dir = migrationsDir();
    const before = templateKey(dir);
    writeFileSync(join(dir, 'index.js.map'), '{}');
    writeFileSync(join(dir, 'index.d.ts'), 'export {};');
    expect(templateKey(dir)).toBe(before);
  });

  it('should use a template whose manifest has the current key', () => {
    const key = templateKey();
    expect(usableTemplate(template(key), key)).toBe(join(root, 'template', TEMPLATE_PGDATA));
  });

  it('should never use a template made from other migrations or another PGlite (another key)', () => {
    const key = templateKey();
    expect(usableTemplate(template('0'.repeat(64)), key)).toBeNull();
  });

  it('should never use a template without a manifest, with an unreadable one, or without a data folder', () => {
    const key = templateKey();
    expect(usableTemplate(join(root, 'absent'), key)).toBeNull();

    const unreadable = template(key);
    writeFileSync(join(unreadable, TEMPLATE_MANIFEST), '{"key": ');
    expect(usableTemplate(unreadable, key)).toBeNull();

    rmSync(join(root, 'template'), { recursive: true });
    expect(usableTemplate(template(key, false), key)).toBeNull();
  });
});
