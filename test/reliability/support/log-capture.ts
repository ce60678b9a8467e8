/**
 * Logs captured over the whole reliability run, and the secrets they must never contain (issue 18 item 6).
 *
 * The reliability project's global setup makes one folder for the run (RELIABILITY_LOG_DIR). Every suite writes the
 * logs of the servers it starts into it, at level `info` or finer: in-process apps through `captureLogs(name)` (a
 * pino destination), child processes through `pipeChildLogs(name, child)`. Every secret a suite creates (raw tokens,
 * webhook secrets, NAS secrets, PPPoE passwords) goes to `recordSecrets`. The global teardown then reads every log
 * and fails the run when one of those secrets appears in any of them (see reliability-teardown.ts).
 */
import type { ChildProcess } from 'node:child_process';
import {
  appendFileSync,
  createWriteStream,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Writable } from 'node:stream';

const SECRETS_FILE = 'secrets.txt';
const LOG_SUFFIX = '.log';

/** The run's folder; a suite run on its own (outside the project's setup) gets a folder of its own. */
export function logDir(): string {
  if (!process.env.RELIABILITY_LOG_DIR) {
    process.env.RELIABILITY_LOG_DIR = mkdtempSync(join(tmpdir(), 'isp-reliability-logs-'));
  }
  mkdirSync(process.env.RELIABILITY_LOG_DIR, { recursive: true });
  return process.env.RELIABILITY_LOG_DIR;
}

function logFile(name: string): string {
  return join(logDir(), `${name.replace(/[^A-Za-z0-9_.-]/g, '_')}${LOG_SUFFIX}`);
}

/** A pino destination appending to the run's log `name`: `startTestApp({ LOG_LEVEL: 'info' }, { logDestination })`. */
export function captureLogs(name: string): Writable {
  return createWriteStream(logFile(name), { flags: 'a' });
}

/** Appends everything `child` writes on stdout and stderr to the run's log `name`. */
export function pipeChildLogs(name: string, child: ChildProcess): void {
  const out = captureLogs(name);
  child.stdout?.on('data', (chunk: Buffer) => out.write(chunk));
  child.stderr?.on('data', (chunk: Buffer) => out.write(chunk));
  child.once('exit', () => out.end());
}

/** Remembers secrets the run created, so the teardown can look for them in every log. */
export function recordSecrets(...secrets: (string | null | undefined)[]): void {
  // 'undefined' and 'null' are what String() makes of a secret a failed creation did not return: searching the
  // logs for them would only find paths like /billing-runs/undefined.
  const kept = secrets.filter(
    (secret): secret is string =>
      typeof secret === 'string' && secret.length >= 8 && secret !== 'undefined' && secret !== 'null',
  );
  if (kept.length > 0) {
    appendFileSync(
      join(logDir(), SECRETS_FILE),
      kept.map((secret) => `${JSON.stringify(secret)}\n`).join(''),
    );
  }
}

export interface LeakScan {
  logs: number;
  bytes: number;
  lines: number;
  secrets: number;
  leaks: { log: string; secret: string; line: string }[];
}

/** Reads every log of the run's folder and reports each line holding a recorded secret. */
export function scanForSecrets(dir = logDir()): LeakScan {
  const secretsPath = join(dir, SECRETS_FILE);
  const files = readdirSync(dir);
  const secrets = files.includes(SECRETS_FILE)
    ? [
        ...new Set(
          readFileSync(secretsPath, 'utf8')
            .split('\n')
            .filter(Boolean)
            .map((line) => JSON.parse(line) as string),
        ),
      ]
    : [];
  const scan: LeakScan = { logs: 0, bytes: 0, lines: 0, secrets: secrets.length, leaks: [] };
  for (const file of files.filter((name) => name.endsWith(LOG_SUFFIX))) {
    const text = readFileSync(join(dir, file), 'utf8');
    scan.logs += 1;
    scan.bytes += Buffer.byteLength(text);
    for (const line of text.split('\n')) {
      if (!line) {
        continue;
      }
      scan.lines += 1;
      for (const secret of secrets) {
        if (line.includes(secret)) {
          scan.leaks.push({ log: file, secret: `${secret.slice(0, 6)}…`, line: line.slice(0, 300) });
        }
      }
    }
  }
  return scan;
}
