import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderErrorsDoc } from '../src/common/errors/error-docs';

const OUTPUT = join(__dirname, '..', 'docs', 'errors.md');

/** `npm run docs:errors` writes docs/errors.md from the catalog; `-- --check` fails when the committed one drifted. */
function main(): void {
  const generated = renderErrorsDoc();
  if (!process.argv.includes('--check')) {
    writeFileSync(OUTPUT, generated);
    process.stdout.write(`Wrote ${OUTPUT}\n`);
    return;
  }
  let committed = '';
  try {
    committed = readFileSync(OUTPUT, 'utf8');
  } catch {
    // a missing file is drift too
  }
  if (committed === generated) {
    process.stdout.write('docs/errors.md is up to date.\n');
  } else {
    process.stderr.write('docs/errors.md is out of date: run `npm run docs:errors` and commit the result.\n');
    process.exitCode = 1;
  }
}

main();
