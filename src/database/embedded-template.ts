import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * The embedded database's template: a data folder made at build time (`npm run build`, scripts/embedded-template.js)
 * by initdb and every migration, copied into an empty DATA_DIR on a first start instead of running both there (docs/
 * performance.md, Embedded database). The migrations stay the only description of the schema: the template is what
 * they made, and it is used only when its key, written beside it, is the key of the migrations and PGlite this code
 * runs with. Anything else (no template, a stale one, a half-written one) and the first start runs initdb and the
 * migrations itself, as it always did.
 */

/** Bumped when how the template is made or what it holds changes in a way the key's other parts do not show. */
const FORMAT = 1;

/** dist/embedded-template beside the compiled code; from the TypeScript sources (tests), src/embedded-template, absent. */
export const DEFAULT_TEMPLATE_DIR = join(__dirname, '..', 'embedded-template');
export const TEMPLATE_MANIFEST = 'manifest.json';
export const TEMPLATE_PGDATA = 'pgdata';

export interface TemplateManifest {
  key: string;
  pglite: string;
  migrations: string[];
}

/** The version of the PGlite package this process loads (its package.json exports no path to itself). */
export function pgliteVersion(): string {
  let dir = dirname(require.resolve('@electric-sql/pglite'));
  for (;;) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const manifest = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (manifest.name === '@electric-sql/pglite' && manifest.version) {
        return manifest.version;
      }
    }
    const parent = dirname(dir);
    if (parent === dir) {
      throw new Error('@electric-sql/pglite: package.json not found');
    }
    dir = parent;
  }
}

function migrationFiles(migrationsDir: string): string[] {
  return readdirSync(migrationsDir, { withFileTypes: true })
    .filter((entry) => entry.isFile() && /\.(js|ts)$/.test(entry.name) && !entry.name.endsWith('.d.ts'))
    .map((entry) => entry.name)
    .sort();
}

/**
 * What a template must have been made from to be used: the PGlite version (its initdb, its data folder format, its
 * pg_trgm) and every byte of every migration file, the list in index among them (migrations import nothing else of
 * this project). A template made from other migrations, even one changed in place, has another key.
 */
export function templateKey(migrationsDir = join(__dirname, 'migrations')): string {
  const hash = createHash('sha256').update(`format ${FORMAT}\0pglite ${pgliteVersion()}\0`);
  for (const name of migrationFiles(migrationsDir)) {
    hash
      .update(`${name}\0`)
      .update(readFileSync(join(migrationsDir, name)))
      .update('\0');
  }
  return hash.digest('hex');
}

/** The template's data folder when it is complete and made from what this code runs; null otherwise. */
export function usableTemplate(templateDir: string, key = templateKey()): string | null {
  try {
    const manifest = JSON.parse(
      readFileSync(join(templateDir, TEMPLATE_MANIFEST), 'utf8'),
    ) as Partial<TemplateManifest>;
    const pgdata = join(templateDir, TEMPLATE_PGDATA);
    return manifest.key === key && existsSync(join(pgdata, 'PG_VERSION')) ? pgdata : null;
  } catch {
    return null; // no template (a build without one, the TypeScript sources) or an unreadable manifest
  }
}
