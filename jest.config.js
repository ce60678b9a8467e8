// @ts-check
/**
 * Five projects: `unit` (src/**\/*.spec.ts), `e2e` (test/**\/*.e2e-spec.ts, on the embedded database unless
 * DATABASE_URL names a Postgres), `radius` (test/radius, a real FreeRADIUS on a real Postgres: `npm run
 * test:radius`), `reliability` (test/reliability, the whole API attacked, raced, killed and cut off its database,
 * and the slow suites that drive server processes of their own: start-up, the CLI, restarts, crashes; `npm run
 * test:reliability`) and `browser` (test/browser, the portal in Debian's Chromium: `npm run test:browser`, never in
 * `npm test`). `npm test` runs radius and reliability too when it can (FreeRADIUS installed, DATABASE_URL set),
 * and otherwise says in one line how to run each.
 *
 * Workers: on the embedded database, one per core, each with a database of its own (test/support/global-setup.ts;
 * on 2 cores, 2 workers took 229 s and 3 took 239 s with more CPU, when the run had 3,866 tests; 4,470 took 615 s from
 * a fresh clone on 2026-12-01); one, as in band, when DATABASE_URL names a
 * server the suites would share: their apps' background workers (webhooks, provisioning, automation, the bill run
 * scheduler) take up the work of every tenant in the database, so two suites at once would carry out each other's
 * orders and runs on their own clocks.
 * `--maxWorkers` on the command line wins.
 */
const { existsSync, readFileSync } = require('node:fs');
const { availableParallelism } = require('node:os');
const { delimiter, join } = require('node:path');

const transform = { '^.+\\.ts$': 'ts-jest' };

/**
 * The cores this process may really use: the CPUs it may run on, or fewer where a cgroup quota (a container's
 * `--cpus`) caps it, since every worker and its database process would otherwise share a small quota.
 */
function usableCores() {
  const cpus = availableParallelism();
  try {
    const [quota, period] = readFileSync('/sys/fs/cgroup/cpu.max', 'utf8').trim().split(/\s+/);
    return quota === 'max' ? cpus : Math.max(1, Math.min(cpus, Math.floor(Number(quota) / Number(period))));
  } catch {
    return cpus;
  }
}

function hasFreeRadius() {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/sbin', '/usr/local/sbin'];
  return dirs.some((dir) => dir && existsSync(join(dir, 'freeradius')));
}

const reliabilityWanted = process.env.RELIABILITY_SUITE === '1';
const reliabilityPossible = Boolean(process.env.DATABASE_URL);
if (!reliabilityWanted && !reliabilityPossible && !process.env.JEST_WORKER_ID) {
  console.log(
    'Reliability suite not run: it runs on a Postgres and Redis; run it with ' +
      'DATABASE_URL=postgres://… REDIS_URL=redis://… npm run test:reliability',
  );
}

// The portal in a real browser (test/browser): Debian's Chromium driven by playwright-core, screenshots written to
// artifacts/portal. Not part of `npm test`, which stays quick and writes nothing: `npm run test:browser` and CI run it.
const browserWanted = process.env.BROWSER_SUITE === '1';
if (!browserWanted && !process.env.JEST_WORKER_ID) {
  console.log(
    'Browser suite not run: it drives Chromium (apt-get install chromium, or CHROMIUM_PATH=…); run it with ' +
      'npm run test:browser',
  );
}

const radiusWanted = process.env.RADIUS_SUITE === '1';
const radiusPossible = hasFreeRadius() && Boolean(process.env.DATABASE_URL);
if (!radiusWanted && !radiusPossible && !process.env.JEST_WORKER_ID) {
  console.log(
    'RADIUS suite not run: it needs FreeRADIUS 3 (apt-get install freeradius freeradius-postgresql freeradius-utils) ' +
      'and a Postgres; run it with DATABASE_URL=postgres://… npm run test:radius',
  );
}

/** @type {import('jest').Config} */
module.exports = {
  testTimeout: 60000,
  maxWorkers: process.env.DATABASE_URL ? 1 : usableCores(),
  projects: [
    {
      displayName: 'unit',
      preset: 'ts-jest',
      testEnvironment: 'node',
      rootDir: '.',
      testMatch: ['<rootDir>/src/**/*.spec.ts', '<rootDir>/test/lint/*.spec.ts'],
      transform,
    },
    {
      displayName: 'e2e',
      preset: 'ts-jest',
      testEnvironment: 'node',
      rootDir: '.',
      testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'],
      // An embedded database per worker (see global-setup), unless DATABASE_URL names a server.
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
      setupFiles: ['<rootDir>/test/support/worker-database.ts'],
      // Every answer a supertest request receives is checked against openapi.json (issue 27, "Proof in CI").
      setupFilesAfterEnv: ['<rootDir>/test/support/contract/response-contract.setup.ts'],
      transform,
    },
    ...(browserWanted
      ? [
          {
            displayName: 'browser',
            preset: 'ts-jest',
            testEnvironment: 'node',
            rootDir: '.',
            testMatch: ['<rootDir>/test/browser/**/*.browser-spec.ts'],
            // The e2e project's embedded database per worker and its check of every supertest answer.
            globalSetup: '<rootDir>/test/support/global-setup.ts',
            globalTeardown: '<rootDir>/test/support/global-teardown.ts',
            setupFiles: ['<rootDir>/test/support/worker-database.ts'],
            setupFilesAfterEnv: ['<rootDir>/test/support/contract/response-contract.setup.ts'],
            transform,
          },
        ]
      : []),
    ...(radiusWanted || radiusPossible
      ? [
          {
            displayName: 'radius',
            preset: 'ts-jest',
            testEnvironment: 'node',
            rootDir: '.',
            testMatch: ['<rootDir>/test/radius/**/*.radius-spec.ts'],
            globalSetup: '<rootDir>/test/radius/support/global-setup.ts',
            transform,
          },
        ]
      : []),
    ...(reliabilityWanted || reliabilityPossible
      ? [
          {
            displayName: 'reliability',
            preset: 'ts-jest',
            testEnvironment: 'node',
            rootDir: '.',
            testMatch: ['<rootDir>/test/reliability/**/*.reliability-spec.ts'],
            globalSetup: '<rootDir>/test/reliability/support/reliability-setup.ts',
            globalTeardown: '<rootDir>/test/reliability/support/reliability-teardown.ts',
            transform,
          },
        ]
      : []),
  ],
};
