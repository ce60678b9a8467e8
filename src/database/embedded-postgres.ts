import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { acquireLock, releaseLock } from './data-dir-lock';

export { DataDirInUseError } from './data-dir-lock';

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
