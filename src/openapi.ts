import 'reflect-metadata';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createApp } from './app.factory';
import { loadConfig } from './config/app-config';
import { startEmbeddedPostgres } from './database/embedded-postgres';
import { buildOpenApiDocument } from './swagger';

const OUTPUT = join(__dirname, '..', 'openapi.json');

/** Recursively sorts object keys so the committed document diffs cleanly. */
function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) {
    return value.map(sortKeys);
  }
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([key, inner]) => [key, sortKeys(inner)]),
    );
  }
  return value;
}

/** `npm run openapi` writes openapi.json; `npm run openapi -- --check` fails when the committed one drifted. */
async function main(): Promise<void> {
  const check = process.argv.includes('--check');
  const embedded = await startEmbeddedPostgres(null);
  const { app, close } = await createApp(loadConfig({ DATABASE_URL: embedded.url, LOG_LEVEL: 'silent' }));
  try {
    const generated = `${JSON.stringify(sortKeys(buildOpenApiDocument(app)), null, 2)}\n`;
    if (check) {
      let committed = '';
      try {
        committed = readFileSync(OUTPUT, 'utf8');
      } catch {
        // a missing file is drift too
      }
      if (committed !== generated) {
        process.stderr.write('openapi.json is out of date: run `npm run openapi` and commit the result.\n');
        process.exitCode = 1;
      } else {
        process.stdout.write('openapi.json is up to date.\n');
      }
    } else {
      writeFileSync(OUTPUT, generated);
      process.stdout.write(`Wrote ${OUTPUT}\n`);
    }
  } finally {
    await close();
    await embedded.stop();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
