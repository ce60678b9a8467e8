/**
 * PostgreSQL clusters of a suite's own, in temporary folders (initdb, then pg_ctl): for a suite that needs a database
 * several server processes share while the run's embedded one serialises every transaction, or one it may take down
 * (test/reliability/support/faults-cluster.ts). The shared server on 5432 is never touched. As root, a cluster runs as
 * the `postgres` user (Postgres refuses to run as root).
 */
import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const exec = promisify(execFile);
const PG_LIB = '/usr/lib/postgresql';

/** The newest PostgreSQL server binaries installed (Debian layout). */
function serverBinaries(): string {
  const versions = existsSync(PG_LIB) ? readdirSync(PG_LIB) : [];
  const bin = versions
    .map((version) => join(PG_LIB, version, 'bin'))
    .filter((dir) => existsSync(join(dir, 'initdb')))
    .sort((a, b) => a.localeCompare(b, 'en', { numeric: true }))
    .pop();
  if (!bin) {
    throw new Error('no PostgreSQL server binaries under /usr/lib/postgresql/*/bin');
  }
  return bin;
}

export interface ClusterFolder {
  /** The temporary folder: the data folder, the log and the Unix socket are in it. */
  dir: string;
  pgdata: string;
  /** The database superuser the cluster is made with (who runs it). */
  user: string;
  /** Runs one of the server's tools (initdb, pg_ctl) as that user. */
  run(tool: string, args: string[]): Promise<void>;
}

/** A fresh temporary folder (`prefix`), its data folder initialised (initdb) with trust authentication. */
export async function initCluster(prefix: string): Promise<ClusterFolder> {
  const bin = serverBinaries();
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const asRoot = process.getuid?.() === 0;
  const run = async (tool: string, args: string[]) => {
    const [file, argv] = asRoot
      ? ['runuser', ['-u', 'postgres', '--', join(bin, tool), ...args]]
      : [join(bin, tool), args];
    await exec(file, argv, { timeout: 60_000 });
  };
  const folder = { dir, pgdata: join(dir, 'data'), user: asRoot ? 'postgres' : userInfo().username, run };
  try {
    if (asRoot) {
      const { stdout } = await exec('id', ['-u', 'postgres']);
      chownSync(dir, Number(stdout.trim()), -1);
    }
    await run('initdb', ['-D', folder.pgdata, '-U', folder.user, '--auth=trust', '--no-sync', '-E', 'UTF8']);
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return folder;
}

export interface ThrowawayCluster {
  /** A `pg` URL on the cluster's Unix socket (no TCP port is opened). */
  url: string;
  stop(): Promise<void>;
}

/** A cluster listening only on a Unix socket in its folder, named after `port`; `stop` deletes it. */
export async function startThrowawayCluster(port: number): Promise<ThrowawayCluster> {
  const { dir, pgdata, user, run } = await initCluster('isp-prov-pg-');
  try {
    await run('pg_ctl', [
      'start',
      '-w',
      '-D',
      pgdata,
      '-l',
      join(dir, 'server.log'),
      '-o',
      `-p ${port} -k ${dir} -c listen_addresses='' -c fsync=off -c max_connections=100`,
    ]);
  } catch (error) {
    await run('pg_ctl', ['stop', '-m', 'immediate', '-D', pgdata]).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    url: `postgres://${user}@${encodeURIComponent(dir)}:${port}/postgres`,
    stop: async () => {
      try {
        await run('pg_ctl', ['stop', '-w', '-m', 'fast', '-D', pgdata]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
