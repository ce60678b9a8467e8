// Run by `npm run build` after `nest build`: makes dist/embedded-template, the data folder a first start of the
// embedded database copies instead of running initdb and the migrations (src/database/embedded-template.ts).
const { join } = require('node:path');

const started = Date.now();
require(join(__dirname, '..', 'dist', 'database', 'embedded-template-build'))
  .buildEmbeddedTemplate()
  .then(
    (manifest) => {
      process.stdout.write(
        `Embedded database template: PGlite ${manifest.pglite}, ${manifest.migrations.length} migrations ` +
          `(${((Date.now() - started) / 1000).toFixed(1)} s)\n`,
      );
      process.exit(0);
    },
    (error) => {
      process.stderr.write(
        `Embedded database template failed: ${error && error.stack ? error.stack : error}\n`,
      );
      process.exit(1);
    },
  );
