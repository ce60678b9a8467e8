import { spawn } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const LISTENING = /listening on (http:\/\/\S+)/;

export type ServerRun =
  | { listening: true; url: string; output(): { stdout: string; stderr: string }; stop(): Promise<void> }
  | { listening: false; code: number | null; stdout: string; stderr: string };

/**
 * Runs `src/main.ts` as `npm start` would, without a terminal (stdout is a pipe, as in a container), with only the
 * variables given on top of this environment's PATH and the like (no DATABASE_URL, REDIS_URL or bootstrap token
 * unless given). Resolves once it listens, or with its output once it has exited.
 */
export function runServer(vars: Record<string, string>): Promise<ServerRun> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of [
    'DATABASE_URL',
    'REDIS_URL',
    'TEST_EMBEDDED_DATABASE',
    'API_BOOTSTRAP_TOKEN',
    'LOG_LEVEL',
  ]) {
    delete env[name];
  }
  const child = spawn(
    process.execPath,
    ['-r', 'ts-node/register/transpile-only', join(ROOT, 'src', 'main.ts')],
    {
      cwd: ROOT,
      env: { ...env, ...vars },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  return new Promise((done) => {
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const match = LISTENING.exec(stdout);
      if (!match) {
        return;
      }
      done({
        listening: true,
        url: match[1],
        output: () => ({ stdout, stderr }),
        stop: async () => {
          if (child.exitCode === null && child.signalCode === null) {
            child.kill('SIGTERM');
          }
          await exited;
        },
      });
    });
    void exited.then((code) => done({ listening: false, code, stdout, stderr }));
  });
}
