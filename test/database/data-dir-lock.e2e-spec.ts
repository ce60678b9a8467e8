import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '..', '..');
const ROUNDS = 40;

/**
 * A process that loads the data-folder lock and, on `go`, waits for the agreed instant (so the contenders really
 * start together) and tries to take the folder; it holds what it took until told to release it.
 */
const CONTENDER = `
const { acquireLock, releaseLock } = require(${JSON.stringify(join(ROOT, 'src/database/data-dir-lock'))});
let held = null;
process.on('message', (m) => {
  if (m.type === 'go') {
    while (Date.now() < m.at) {}
    try {
      held = [m.dir, acquireLock(m.dir)];
      process.send({ type: 'result', locked: true });
    } catch (error) {
      process.send({ type: 'result', locked: false, error: error.message });
    }
  } else if (m.type === 'release') {
    if (held) releaseLock(held[0], held[1]);
    held = null;
    process.send({ type: 'released' });
  }
});
process.send({ type: 'ready' });
`;

interface Reply {
  type: string;
  locked?: boolean;
  error?: string;
}

function nextMessage(child: ChildProcess): Promise<Reply> {
  return new Promise((done) => child.once('message', (message) => done(message as Reply)));
}

function startContender(): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['-r', 'ts-node/register/transpile-only', '-e', CONTENDER], {
    cwd: ROOT,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return nextMessage(child).then(() => child);
}

/** The pid of a process that has exited: what a lock left by a crashed server holds. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
  return Number(child.stdout.toString());
}

describe('Data folder lock (DATA_DIR/isp-api.lock)', () => {
  const contenders: ChildProcess[] = [];
  let dataDir: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'isp-api-lock-'));
    contenders.push(...(await Promise.all([startContender(), startContender()])));
  }, 60_000);
  afterAll(() => {
    for (const child of contenders) {
      child.kill();
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('should give a folder holding a stale lock to exactly one of two processes starting at once', async () => {
    const lockPath = join(dataDir, 'isp-api.lock');
    for (let round = 0; round < ROUNDS; round++) {
      writeFileSync(lockPath, String(deadPid()));
      const replies = contenders.map(nextMessage);
      const at = Date.now() + 30;
      for (const child of contenders) {
        child.send({ type: 'go', dir: dataDir, at });
      }
      const results = await Promise.all(replies);

      expect({ round, locked: results.filter((reply) => reply.locked).length }).toEqual({ round, locked: 1 });
      const refused = results.find((reply) => !reply.locked);
      expect(refused?.error).toMatch(/The data folder .* is in use by another process \(pid \d+\)/);
      const holder = contenders[results.findIndex((reply) => reply.locked)];
      expect(readFileSync(lockPath, 'utf8')).toBe(String(holder.pid));

      await Promise.all(contenders.map((child) => (child.send({ type: 'release' }), nextMessage(child))));
    }
  }, 60_000);
});
