import { PGlite, type Extension } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { spawn } from 'node:child_process';
import { chmodSync, cpSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { acquireLock, releaseLock } from './data-dir-lock';
import { EmbeddedExchangeQueue } from './embedded-exchange-queue';
import { DURABLE_START_PARAMS, enableFsync, fsyncPath, fsyncTree } from './embedded-durability';
import { DEFAULT_TEMPLATE_DIR, usableTemplate } from './embedded-template';

export { DataDirInUseError } from './data-dir-lock';

export interface EmbeddedPostgres {
  /** A `pg` URL whose host is the folder of the database's Unix socket. */
  url: string;
  /** One line for the boot log: what a crash can cost on this database. */
  durability: string;
  /**
   * How this start made the data folder: copied from the build's template, by initdb, or null when it opened one that
   * was there (or runs in memory).
   */
  created: 'template' | 'initdb' | null;
  stop(): Promise<void>;
}

export interface EmbeddedOptions {
  /**
   * Where to look for a template of the data folder (src/database/embedded-template.ts); null: never use one. By
   * default the build's, dist/embedded-template.
   */
  templateDir?: string | null;
}

/** Only names the socket file (`.s.PGSQL.5432`, where `pg` looks for it); no TCP port is opened. */
const SOCKET_PORT = 5432;
const SOCKET_FILE = `.s.PGSQL.${SOCKET_PORT}`;
/** A Unix socket path holds 107 bytes on Linux and 103 on macOS. */
const MAX_SOCKET_PATH = 103;

/**
 * The folder of the socket: DATA_DIR/socket, else (in memory, or a DATA_DIR too deep for a socket path) a fresh
 * temporary folder. Mode 0700 either way, so no other local user reaches the socket.
 */
function socketFolder(dataDir: string | null): { dir: string; temporary: boolean } {
  const dir = dataDir ? join(dataDir, 'socket') : null;
  if (!dir || Buffer.byteLength(join(dir, SOCKET_FILE)) > MAX_SOCKET_PATH) {
    return { dir: mkdtempSync(join(tmpdir(), 'isp-api-db-')), temporary: true }; // mkdtemp makes it 0700
  }
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  rmSync(join(dir, SOCKET_FILE), { force: true }); // left by a process that died: we hold the data folder's lock
  return { dir, temporary: false };
}

/**
 * The contrib extensions the migrations create (pg_trgm: the ticket search indexes), as a Postgres server has them.
 * Loaded by path: a subpath export, which this project's CommonJS module resolution cannot name in an import.
 */
const loadContrib = createRequire(__filename);
const EXTENSIONS = {
  pg_trgm: (loadContrib('@electric-sql/pglite/contrib/pg_trgm') as { pg_trgm: Extension }).pg_trgm,
};

/**
 * PGlite's shared_buffers is initdb's 128 MB, and all of it is resident from the moment the database opens (the WASM
 * build writes its whole shared memory at start): 16 MB keeps the server's RSS within its target (docs/performance.md,
 * Embedded database). A page it does not hold is read back from the OS page cache, which holds the folder's files.
 */
const MEMORY_PARAMS = ['-c', 'shared_buffers=16MB'];

/**
 * Run in a node process of its own by initdbApart: argv holds PGlite's entry point and the folder. Plain JavaScript,
 * so it runs the same from dist/ and from the TypeScript sources (tests, bench).
 */
const INITDB_SCRIPT = `
const [pglite, dataDir] = process.argv.slice(1);
require(pglite)
  .PGlite.create({ dataDir })
  .then((db) => db.close())
  .then(
    () => process.exit(0),
    (error) => {
      process.stderr.write(String(error && error.stack ? error.stack : error));
      process.exit(1);
    },
  );
`;

/**
 * The first start on an empty folder: the data folder is made beside `pgdata`, flushed, then renamed into place, so a
 * first start that is interrupted leaves no half-made database behind, only a folder the next start removes.
 */
async function createApart(
  dataDir: string,
  pgdata: string,
  make: (staging: string) => Promise<void>,
): Promise<void> {
  const staging = `${pgdata}.initdb`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { mode: 0o700 });
  chmodSync(staging, 0o700);
  try {
    await make(staging);
  } catch (error) {
    rmSync(staging, { recursive: true, force: true });
    throw error;
  }
  fsyncTree(staging);
  renameSync(staging, pgdata); // over the empty folder openDatabase made
  fsyncPath(dataDir);
}

/**
 * initdb (a second PGlite, a copy of its heap, and the data folder as a tar) peaks near 900 MB and its memory is not
 * given back to the OS; in a short-lived process it is, and the server opens the finished folder.
 */
async function initdbApart(staging: string): Promise<void> {
  const child = spawn(
    process.execPath,
    ['-e', INITDB_SCRIPT, require.resolve('@electric-sql/pglite'), staging],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  });
  if (code !== 0) {
    throw new Error(`initdb of the embedded database failed (exit code ${code}): ${stderr.trim()}`);
  }
}

async function openDatabase(
  dataDir: string | null,
  templateDir: string | null,
): Promise<{ db: PGlite; durability: string; created: EmbeddedPostgres['created'] }> {
  if (!dataDir) {
    return {
      created: null,
      db: await PGlite.create({
        startParams: [...PGlite.defaultStartParams, ...MEMORY_PARAMS],
        extensions: EXTENSIONS,
      }),
      durability: 'Embedded database in memory: nothing is kept.',
    };
  }
  const pgdata = join(dataDir, 'pgdata');
  // PGlite makes its files mode 0666: the folder, 0700 as Postgres requires of its own, keeps other users out.
  mkdirSync(pgdata, { recursive: true, mode: 0o700 });
  chmodSync(pgdata, 0o700);
  // A folder holding files but no PG_VERSION is left to PGlite, as it always was.
  let created: EmbeddedPostgres['created'] = null;
  if (readdirSync(pgdata).length === 0) {
    // The build's template when it was made from these migrations and this PGlite: no initdb, no migration to run.
    const template = templateDir === null ? null : usableTemplate(templateDir);
    if (template) {
      await createApart(dataDir, pgdata, (staging) => {
        cpSync(template, staging, { recursive: true });
        return Promise.resolve();
      });
      created = 'template';
    } else {
      await createApart(dataDir, pgdata, initdbApart);
      created = 'initdb';
    }
  }
  const db = await PGlite.create({
    dataDir: pgdata,
    startParams: [...DURABLE_START_PARAMS, ...MEMORY_PARAMS],
    extensions: EXTENSIONS,
  });
  if (!enableFsync(db)) {
    return {
      db,
      created,
      durability:
        `Embedded database in ${dataDir}: PGlite cannot fsync here, so commits survive a crash of this process ` +
        'but a host crash or power cut can lose the last seconds of them; use DATABASE_URL in production.',
    };
  }
  fsyncTree(pgdata);
  fsyncPath(dataDir);
  return {
    db,
    created,
    durability:
      `Embedded database in ${dataDir}: every commit is fsynced before it is acknowledged (it survives a host ` +
      'crash); one process only, for trials and small installs: use DATABASE_URL in production.',
  };
}

/**
 * Starts PGlite (Postgres compiled to WASM) on `dataDir`, or in memory when dataDir is null, and serves it on a Unix
 * socket only this user can open, so TypeORM reaches it through `pg` like any server and no other local process
 * does (PGlite checks no password). PGlite is one session: EmbeddedExchangeQueue gives it to one connection at a time,
 * from its first message until the session is idle again, which gives serialisable behaviour for the concurrency
 * tests.
 */
export async function startEmbeddedPostgres(
  dataDir: string | null,
  options: EmbeddedOptions = {},
): Promise<EmbeddedPostgres> {
  let lockPath: string | null = null;
  if (dataDir) {
    mkdirSync(dataDir, { recursive: true });
    lockPath = acquireLock(dataDir);
  }
  let socket: { dir: string; temporary: boolean } | null = null;
  const cleanUp = () => {
    if (socket?.temporary) {
      rmSync(socket.dir, { recursive: true, force: true });
    }
    releaseLock(dataDir, lockPath);
  };
  try {
    socket = socketFolder(dataDir);
    const { db, durability, created } = await openDatabase(
      dataDir,
      options.templateDir === undefined ? DEFAULT_TEMPLATE_DIR : options.templateDir,
    );
    const socketPath = join(socket.dir, SOCKET_FILE);
    const server = new PGLiteSocketServer({ db, path: socketPath, maxConnections: 100 });
    EmbeddedExchangeQueue.install(server, db);
    try {
      await server.start();
      chmodSync(socketPath, 0o600);
    } catch (error) {
      await server.stop();
      await db.close();
      throw error;
    }
    let stopped = false;
    return {
      url: `postgres://postgres@${encodeURIComponent(socket.dir)}:${SOCKET_PORT}/postgres`,
      durability,
      created,
      async stop() {
        if (stopped) {
          return;
        }
        stopped = true;
        await server.stop();
        await db.close();
        cleanUp();
      },
    };
  } catch (error) {
    cleanUp();
    throw error;
  }
}
