import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '..', '..');

/**
 * In a process of its own (PGlite's dynamic import() is refused inside jest's sandbox): makes a template, starts the
 * embedded database on an empty folder from it, reads what the folder holds, stops, starts again on the same folder.
 */
const SCRIPT = `
const { Client } = require('pg');
const { buildEmbeddedTemplate } = require(${JSON.stringify(join(ROOT, 'src/database/embedded-template-build'))});
const { startEmbeddedPostgres } = require(${JSON.stringify(join(ROOT, 'src/database/embedded-postgres'))});
const { usableTemplate } = require(${JSON.stringify(join(ROOT, 'src/database/embedded-template'))});
const { MIGRATIONS } = require(${JSON.stringify(join(ROOT, 'src/database/migrations'))});
const [templateDir, dataDir] = process.argv.slice(1);

async function read(url) {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const one = async (sql) => (await client.query(sql)).rows;
    return {
      migrations: (await one('SELECT name FROM migrations ORDER BY id')).map((row) => row.name),
      extensions: (await one("SELECT extname FROM pg_extension WHERE extname = 'pg_trgm'")).map((row) => row.extname),
      tokens: Number((await one('SELECT count(*) AS n FROM api_tokens'))[0].n),
      tenants: Number((await one('SELECT count(*) AS n FROM tenants'))[0].n),
      written: (await one("INSERT INTO tenants (id, slug, name, created_at) VALUES ('ten_template', 'template-e2e', 'x', now()) RETURNING slug"))[0].slug,
    };
  } finally {
    await client.end();
  }
}

(async () => {
  const manifest = await buildEmbeddedTemplate(templateDir);
  const first = await startEmbeddedPostgres(dataDir, { templateDir });
  const firstRead = await read(first.url);
  await first.stop();
  const again = await startEmbeddedPostgres(dataDir, { templateDir });
  const client = new Client({ connectionString: again.url });
  await client.connect();
  const kept = (await client.query("SELECT slug FROM tenants WHERE id = 'ten_template'")).rows.map((row) => row.slug);
  await client.end();
  await again.stop();
  process.stdout.write(JSON.stringify({
    manifest,
    expected: MIGRATIONS.map((migration) => migration.name),
    created: [first.created, again.created],
    firstRead,
    kept,
    templateStillUsable: usableTemplate(templateDir) !== null,
  }));
})().catch((error) => {
  process.stderr.write(String(error && error.stack ? error.stack : error));
  process.exit(1);
});
`;

function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['-r', 'ts-node/register/transpile-only', '-e', SCRIPT, ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((done) => child.once('close', (code) => done({ code, stdout, stderr })));
}

describe('Embedded database template (src/database/embedded-template.ts)', () => {
  let root: string;
  beforeAll(() => (root = mkdtempSync(join(tmpdir(), 'isp-api-template-e2e-'))));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('should start an empty folder from the template: every migration applied, no token or tenant, and it persists', async () => {
    const templateDir = join(root, 'template');
    const result = await run([templateDir, join(root, 'data')]);
    expect(result).toMatchObject({ code: 0 });
    const out = JSON.parse(result.stdout);

    expect(out.manifest.migrations).toEqual(out.expected);
    expect(out.created).toEqual(['template', null]);
    expect(out.firstRead).toEqual({
      migrations: out.expected,
      extensions: ['pg_trgm'],
      tokens: 0,
      tenants: 0,
      written: 'template-e2e',
    });
    expect(out.kept).toEqual(['template-e2e']);
    // Copied, not moved or written to: the next installation starts from the same template.
    expect(out.templateStillUsable).toBe(true);
  }, 300_000);
});
