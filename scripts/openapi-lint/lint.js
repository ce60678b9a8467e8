'use strict';
/**
 * `npm run lint:openapi`: Redocly CLI lints openapi.json under redocly.yaml, then Spectral under .spectral.yaml, and
 * this fails on any problem of either, warnings included (`redocly lint` itself exits 0 on warnings). Ignored problems (.redocly.lint-ignore.yaml) do not count.
 */
const { spawnSync } = require('node:child_process');
const { join } = require('node:path');

const root = join(__dirname, '..', '..');
const cli = require.resolve('@redocly/cli/bin/cli.js', { paths: [root] });
const run = spawnSync(
  process.execPath,
  [cli, 'lint', 'openapi.json', '--format=json', '--max-problems=10000'],
  {
    cwd: root,
    encoding: 'utf8',
    env: { ...process.env, REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
  },
);
let report;
try {
  report = JSON.parse(run.stdout);
} catch {
  process.stderr.write(`redocly lint gave no report (exit ${run.status}):\n${run.stdout}${run.stderr}`);
  process.exit(1);
}
for (const problem of report.problems) {
  const where = problem.location.map((location) => location.pointer).join(', ');
  process.stdout.write(`${problem.severity} ${problem.ruleId} ${where}: ${problem.message}\n`);
}
const { errors, warnings, ignored } = report.totals;
process.stdout.write(`openapi.json (Redocly): ${errors} errors, ${warnings} warnings, ${ignored} ignored.\n`);

// Then Spectral under .spectral.yaml (spectral:oas and the OWASP rules it enables): any finding at all fails.
const spectral = require.resolve('@stoplight/spectral-cli/dist/index.js', { paths: [root] });
const second = spawnSync(
  process.execPath,
  [spectral, 'lint', 'openapi.json', '--ruleset', '.spectral.yaml', '--format', 'json', '--quiet'],
  { cwd: root, encoding: 'utf8' },
);
let findings;
try {
  findings = JSON.parse(second.stdout || '[]');
} catch {
  process.stderr.write(
    `spectral lint gave no report (exit ${second.status}):\n${second.stdout}${second.stderr}`,
  );
  process.exit(1);
}
for (const finding of findings) {
  process.stdout.write(`spectral ${finding.code} #/${finding.path.join('/')}: ${finding.message}\n`);
}
process.stdout.write(`openapi.json (Spectral): ${findings.length} findings.\n`);
process.exitCode = errors + warnings + findings.length > 0 ? 1 : 0;
