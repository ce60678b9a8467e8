/**
 * `npm run bench:embedded-memory [-- options]`: the server on its own embedded database, as `npm start` runs it
 * (node with the flags of `npm start`, dist/main.js, PGlite inside the process, DATA_DIR a fresh empty folder):
 *   1. first start on the empty folder: seconds to the first 200 from /health/ready (the app built, its migrations run,
 *      its requests served: /health/live answers 200 from the moment the port is bound, before the database opens),
 *      and the CPU seconds the process and its children (initdb's) had used by then; then RSS when idle;
 *   2. a restart on the same folder: the same two figures;
 *   3. load on the restarted server (POST then GET /api/v1/subscribers, 64 connections): its peak RSS.
 * RSS is VmRSS of the one process (the app and PGlite together) after --idle seconds without requests; VmHWM is its
 * high-water mark since it started (the first start's includes initdb, however it is run).
 *
 *   --idle <s>   seconds to wait after /health/live answers before reading the idle RSS (10)
 *   --load <s>   seconds of each of the two loads of step 3 (5; 0 skips step 3)
 */
import autocannon from 'autocannon';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BOOTSTRAP_TOKEN } from './cases';
import { freePort, productionNodeFlags, ROOT } from './processes';
import { RssSampler } from './process-stats';
import { log } from './report';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function seconds(argv: string[], name: string, fallback: number): number {
  const at = argv.indexOf(`--${name}`);
  if (at === -1) {
    return fallback;
  }
  const value = Number(argv[at + 1]);
  if (!Number.isFinite(value) || value < 0) {
    throw new Error(`--${name} must be a number of seconds`);
  }
  return value;
}

function memoryMb(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0);
  return { rss: kb('VmRSS') / 1024, hwm: kb('VmHWM') / 1024 };
}

interface Started {
  child: ChildProcess;
  baseUrl: string;
  /** Seconds from spawn to the first 200 of /health/live (the port bound) and of /health/ready (the app serving). */
  liveS: number;
  startS: number;
  /** CPU seconds (user + system) of the process and of its children that had ended, at the first ready. */
  cpuS: number;
}

/** CPU seconds of a process and of the children it has waited for, from /proc/<pid>/stat (1/100 s ticks). */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return [11, 12, 13, 14].reduce((sum, at) => sum + Number(fields[at]), 0) / 100;
}

/** `npm start` on dataDir: resolves once /health/ready answers 200, with the seconds from spawn to that answer. */
async function start(dataDir: string): Promise<Started> {
  const port = await freePort();
  const began = process.hrtime.bigint();
  const child = spawn(process.execPath, [...productionNodeFlags(), 'dist/main.js'], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'pipe'],
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      NODE_ENV: 'production',
      DATA_DIR: dataDir,
      PORT: String(port),
      LOG_LEVEL: 'warn',
      API_BOOTSTRAP_TOKEN: BOOTSTRAP_TOKEN,
      RATE_LIMIT_MAX: '10000000',
    },
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const baseUrl = `http://127.0.0.1:${port}`;
  const elapsedS = () => Number(process.hrtime.bigint() - began) / 1e9;
  let liveS: number | null = null;
  for (;;) {
    if (child.exitCode !== null) {
      throw new Error(`the server exited (code ${child.exitCode}) during boot:\n${stderr}`);
    }
    const status = (path: string) =>
      fetch(`${baseUrl}${path}`).then(
        (response) => response.status,
        () => 0,
      );
    if (liveS === null && (await status('/health/live')) === 200) {
      liveS = elapsedS();
    }
    if (liveS !== null && (await status('/health/ready')) === 200) {
      return { child, baseUrl, liveS, startS: elapsedS(), cpuS: cpuSeconds(child.pid!) };
    }
    await sleep(20);
  }
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) {
    return;
  }
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  await exited;
}

async function idleRss(started: Started, idleS: number): Promise<{ rss: number; hwm: number }> {
  await sleep(idleS * 1000);
  return memoryMb(started.child.pid!);
}

/** One autocannon load against the server; the peak RSS while it ran. */
async function load(started: Started, method: 'GET' | 'POST', durationS: number): Promise<number> {
  const sampler = new RssSampler([started.child.pid!]);
  sampler.window();
  let seq = 0;
  const tag = Date.now().toString(36);
  const result = await autocannon({
    url: `${started.baseUrl}/api/v1/subscribers`,
    method,
    connections: 64,
    duration: durationS,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${BOOTSTRAP_TOKEN}` },
    requests: [
      {
        method,
        setupRequest: (request) =>
          method === 'GET'
            ? { ...request, path: '/api/v1/subscribers?limit=100' }
            : {
                ...request,
                body: JSON.stringify({
                  external_id: `mem-${tag}-${++seq}`,
                  full_name: `Memory Subscriber ${seq}`,
                  email: `mem-${tag}-${seq}@example.net`,
                  status: 'active',
                }),
              },
      },
    ],
  });
  const peak = sampler.window();
  sampler.stop();
  log(
    `  ${method} /api/v1/subscribers: ${Math.round(result.requests.average)} req/s, ` +
      `${result.non2xx} non-2xx, ${result.errors} errors, peak RSS ${peak.toFixed(0)} MB`,
  );
  return peak;
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const idleS = seconds(argv, 'idle', 10);
  const loadS = seconds(argv, 'load', 5);
  const dataDir = mkdtempSync(join(tmpdir(), 'isp-embedded-memory-'));
  const rows: string[] = [];
  const row = (what: string, value: string) => rows.push(`| ${what} | ${value} |`);
  try {
    const first = await start(dataDir);
    const firstIdle = await idleRss(first, idleS);
    await stop(first.child);
    row('first start on an empty folder → /health/live 200 (port bound)', `${first.liveS.toFixed(2)} s`);
    row(
      'first start on an empty folder → /health/ready 200 (CPU s)',
      `${first.startS.toFixed(2)} s (${first.cpuS.toFixed(2)})`,
    );
    row(
      `RSS ${idleS} s idle after the first start (VmHWM)`,
      `${firstIdle.rss.toFixed(0)} MB (${firstIdle.hwm.toFixed(0)})`,
    );

    const again = await start(dataDir);
    try {
      const againIdle = await idleRss(again, idleS);
      row(
        'restart on the same folder → /health/ready 200 (CPU s)',
        `${again.startS.toFixed(2)} s (${again.cpuS.toFixed(2)})`,
      );
      row(
        `RSS ${idleS} s idle after the restart (VmHWM)`,
        `${againIdle.rss.toFixed(0)} MB (${againIdle.hwm.toFixed(0)})`,
      );
      if (loadS > 0) {
        log(`Load on the restarted server, ${loadS} s each, 64 connections:`);
        const peak = Math.max(await load(again, 'POST', loadS), await load(again, 'GET', loadS));
        row(
          'peak RSS under load (VmHWM)',
          `${peak.toFixed(0)} MB (${memoryMb(again.child.pid!).hwm.toFixed(0)})`,
        );
      }
    } finally {
      await stop(again.child);
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
  log('\n| embedded database, npm start | |\n|---|---:|\n' + rows.join('\n'));
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(
      `bench:embedded-memory failed: ${error instanceof Error ? error.stack : String(error)}\n`,
    );
    process.exit(1);
  },
);
