import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import request from 'supertest';
import { BOOTSTRAP_TOKEN } from './test-app';

const ROOT = join(__dirname, '..', '..');
const LISTENING = /listening on (http:\/\/\S+)/;

export interface ProcessEnd {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** What the process wrote to stderr, for the failure message. */
  stderr: string;
}

export interface ServerProcess {
  /** Base address of the running server. */
  url: string;
  /** Sends SIGTERM and resolves with how the process ended once it has gone. */
  stop(): Promise<ProcessEnd>;
}

/**
 * Starts `src/main.ts` in its own Node process on the embedded database in `dataDir`, exactly as `npm start` runs
 * without DATABASE_URL. A child process, because PGlite loads its file system with a dynamic import() that jest's
 * module sandbox refuses (ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING_FLAG); the in-memory database does not need it.
 * Rejects with the process' stderr when it exits before it listens.
 */
export function startServerProcess(dataDir: string): Promise<ServerProcess> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.DATABASE_URL;
  delete env.REDIS_URL;
  delete env.TEST_EMBEDDED_DATABASE;
  Object.assign(env, {
    PORT: '0',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    API_BOOTSTRAP_TOKEN: BOOTSTRAP_TOKEN,
  });

  const child: ChildProcess = spawn(
    process.execPath,
    ['-r', 'ts-node/register/transpile-only', join(ROOT, 'src', 'main.ts')],
    { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  const exited = new Promise<ProcessEnd>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal, stderr })),
  );
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));

  return new Promise<ServerProcess>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const match = LISTENING.exec(stdout);
      if (!match) {
        return;
      }
      child.stdout?.removeAllListeners('data');
      child.stdout?.resume();
      const server: ServerProcess = {
        url: match[1],
        stop: () => {
          if (child.exitCode === null && child.signalCode === null) {
            child.kill('SIGTERM');
          }
          return exited;
        },
      };
      // One answered request proves the process finished booting (its signal handlers are in place).
      request(server.url)
        .get('/health/live')
        .then(() => resolve(server), reject);
    });
    void exited.then(({ code, signal }) =>
      reject(
        new Error(`server ended (${signal ?? code}) before listening: ${stderr.trim() || stdout.trim()}`),
      ),
    );
  });
}
