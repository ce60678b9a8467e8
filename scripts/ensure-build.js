// Builds dist/ when it is missing or older than any source file, so `npm start` works on a fresh clone, and the
// embedded database's template (scripts/embedded-template.js) when it is missing or was made from other migrations.
const { existsSync, readdirSync, statSync } = require('node:fs');
const { join } = require('node:path');
const { execSync } = require('node:child_process');

const root = join(__dirname, '..');
const entry = join(root, 'dist', 'main.js');

function newestMtime(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

if (!existsSync(entry) || newestMtime(join(root, 'src')) > statSync(entry).mtimeMs) {
  process.stdout.write('Building the server (dist/ is missing or stale)...\n');
  execSync('npx nest build', { cwd: root, stdio: 'inherit' });
}
const template = require(join(root, 'dist', 'database', 'embedded-template'));
if (!template.usableTemplate(template.DEFAULT_TEMPLATE_DIR)) {
  try {
    execSync(`node ${JSON.stringify(join(__dirname, 'embedded-template.js'))}`, {
      cwd: root,
      stdio: 'inherit',
    });
  } catch {
    // Not a reason to stop: a first start without the template runs initdb and the migrations itself.
    process.stdout.write('Starting without the embedded database template (its first start is slower).\n');
  }
}
