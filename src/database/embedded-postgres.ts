import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export class DataDirInUseError extends Error {
  constructor(dataDir: string, pid: number) {
    super(
      `The data folder ${dataDir} is in use by another process (pid ${pid}). ` +
        'Stop the running server first, or point DATA_DIR at another folder.',
    );
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Folders this process has open: a second opener in the same process is refused like one in another process. */
const openHere = new Set<string>();

/** PGlite holds its files in one process only; a lock file turns a second opener into a clear error. */
function acquireLock(dataDir: string): string {
  if (openHere.has(dataDir)) throw new DataDirInUseError(dataDir, process.pid);
  const lockPath = join(dataDir, 'isp-api.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lockPath, 'wx');
      writeFileSync(fd, String(process.pid));
      closeSync(fd);
      openHere.add(dataDir);
      return lockPath;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const pid = Number(readFileSync(lockPath, 'utf8'));
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && isAlive(pid)) {
        throw new DataDirInUseError(dataDir, pid);
      }
      rmSync(lockPath, { force: true }); // left behind by a process that died
    }
  }
  throw new Error(`Could not lock the data folder ${dataDir}.`);
}

function releaseLock(dataDir: string | null, lockPath: string | null): void {
  if (!dataDir || !lockPath) return;
  rmSync(lockPath, { force: true });
  openHere.delete(dataDir);
}

export interface EmbeddedPostgres {
  url: string;
  stop(): Promise<void>;
}

/**
 * Starts PGlite (Postgres compiled to WASM) on `dataDir`, or in memory when dataDir is null, and serves it on a
 * loopback port so TypeORM reaches it through `pg` like any server. The socket server queues queries from its
 * connections and runs one transaction at a time, which gives serialisable behaviour for the concurrency tests.
 */
export async function startEmbeddedPostgres(dataDir: string | null): Promise<EmbeddedPostgres> {
  let lockPath: string | null = null;
  if (dataDir) {
    mkdirSync(dataDir, { recursive: true });
    lockPath = acquireLock(dataDir);
  }
  try {
    const db = await PGlite.create(dataDir ? join(dataDir, 'pgdata') : undefined);
    const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: 100 });
    await server.start();
    const port = Number(server.getServerConn().split(':').pop());
    let stopped = false;
    return {
      url: `postgres://postgres@127.0.0.1:${port}/postgres`,
      async stop() {
        if (stopped) return;
        stopped = true;
        await server.stop();
        await db.close();
        releaseLock(dataDir, lockPath);
      },
    };
  } catch (error) {
    releaseLock(dataDir, lockPath);
    throw error;
  }
}
