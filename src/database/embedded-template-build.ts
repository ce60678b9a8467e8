import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { migrate } from './database.module';
import { startEmbeddedPostgres } from './embedded-postgres';
import {
  DEFAULT_TEMPLATE_DIR,
  pgliteVersion,
  TEMPLATE_MANIFEST,
  TEMPLATE_PGDATA,
  type TemplateManifest,
  templateKey,
} from './embedded-template';
import { MIGRATIONS } from './migrations';

/**
 * Makes the embedded database's template (src/database/embedded-template.ts) in `templateDir`: a first start of the
 * embedded database on an empty folder, as the server does it (initdb in a process of its own, then the migrations
 * through TypeORM on its socket), stopped cleanly. Only the data folder is kept, with the manifest written last: a
 * build interrupted before it leaves nothing a start would use. No token, tenant or other row of the app's boot is in
 * it (BootstrapService runs at each installation's first start).
 */
export async function buildEmbeddedTemplate(templateDir = DEFAULT_TEMPLATE_DIR): Promise<TemplateManifest> {
  const key = templateKey();
  const staging = `${templateDir}.building`;
  rmSync(templateDir, { recursive: true, force: true });
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  const embedded = await startEmbeddedPostgres(staging, { templateDir: null });
  try {
    await migrate(embedded.url, true);
  } finally {
    await embedded.stop();
  }
  mkdirSync(templateDir, { recursive: true });
  renameSync(join(staging, 'pgdata'), join(templateDir, TEMPLATE_PGDATA));
  rmSync(staging, { recursive: true, force: true });
  const manifest: TemplateManifest = {
    key,
    pglite: pgliteVersion(),
    migrations: MIGRATIONS.map((migration) => migration.name),
  };
  writeFileSync(join(templateDir, TEMPLATE_MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
  return manifest;
}
