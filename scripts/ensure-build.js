// Builds dist/ when it is missing or older than any source file, so `npm start` works on a fresh clone.
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
