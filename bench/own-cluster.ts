import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { freePort } from './processes';

/**
 * --own-cluster: a throw-away PostgreSQL cluster for one run, so the bench can read pg_stat_statements (it must be
 * preloaded, and the shared server is never restarted or reconfigured). initdb in a temp dir, the tuning settings of
 * the server it replaces copied over, its own port on 127.0.0.1, `pg_ctl stop` and the directory removed at the end.
 * Its postmaster's pid lets the bench count the database CPU of this cluster alone (not of other users' backends).
 */

const BIN_DIRS = ['/usr/lib/postgresql/15/bin', '/usr/lib/postgresql/16/bin', '/usr/lib/postgresql/17/bin'];

/** The settings that change what a statement costs, copied from the server the bench would otherwise use. */
const COPIED_SETTINGS = [
  'shared_buffers',
  'max_connections',
  'work_mem',
  'maintenance_work_mem',
  'effective_cache_size',
  'random_page_cost',
  'autovacuum',
  'fsync',
  'synchronous_commit',
  'full_page_writes',
  'wal_buffers',
  'max_wal_size',
  'min_wal_size',
  'checkpoint_timeout',
  'jit',
  'TimeZone',
];

export interface OwnCluster {
  /** postgres://postgres@127.0.0.1:<port>/<the bench database's name> */
  url: string;
  postmasterPid: number;
  /** What was copied from the replaced server (name → value), for the report. */
  settings: Record<string, string>;
  stop(): Promise<void>;
}

function binDir(): string {
  const fromEnv = process.env.BENCH_PG_BIN;
  const found = [fromEnv, ...BIN_DIRS].find((dir): dir is string => !!dir && existsSync(join(dir, 'initdb')));
  if (!found) {
    throw new Error(`--own-cluster: no initdb in ${BIN_DIRS.join(', ')} (set BENCH_PG_BIN)`);
  }
  return found;
}

/** initdb and postgres refuse root: as root, they run as the `postgres` user (runuser), who owns the directory. */
function runAs(): { prefix: string[]; uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) {
    return null;
  }
  const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
  return { prefix: ['runuser', '-u', 'postgres', '--'], uid, gid };
}

async function settingsOf(sourceUrl: string): Promise<Record<string, string>> {
  const source = new URL(sourceUrl);
  source.pathname = '/postgres';
  const client = new Client({ connectionString: source.toString() });
  await client.connect();
  try {
    const settings: Record<string, string> = {};
    for (const name of COPIED_SETTINGS) {
      const { rows } = await client.query<{ value: string }>('SELECT current_setting($1) AS value', [name]);
      settings[name] = rows[0].value;
    }
    const { rows } = await client.query<{ datcollate: string }>(
      "SELECT datcollate FROM pg_database WHERE datname = 'template1'",
    );
    settings.locale = rows[0].datcollate;
    return settings;
  } finally {
    await client.end();
  }
}

/** Runs a PostgreSQL binary (as `postgres` when this is root). */
function runner(bin: string, user: ReturnType<typeof runAs>) {
  return (command: string, args: string[]) => {
    const binary = join(bin, command);
    const [file, ...argv] = user ? [...user.prefix, binary, ...args] : [binary, ...args];
    return execFileSync(file, argv, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  };
}

/** The lines appended to the new cluster's postgresql.conf. */
function configLines(dir: string, port: number, copied: Record<string, string>): string[] {
  const quote = (value: string) => `'${value.replace(/'/g, "''")}'`;
  return [
    '# isp bench --own-cluster',
    `port = ${port}`,
    "listen_addresses = '127.0.0.1'",
    `unix_socket_directories = ${quote(dir)}`,
    "shared_preload_libraries = 'pg_stat_statements'",
    'pg_stat_statements.max = 5000',
    "pg_stat_statements.track = 'all'",
    'track_activity_query_size = 4096',
    ...Object.entries(copied).map(([name, value]) => `${name} = ${quote(value)}`),
  ];
}

/**
 * In the `postgres` database: the bench's reset drops the bench database's public schema, and the view shows every
 * database's statements (the bench reads its database's by dbid).
 */
async function createExtension(port: number): Promise<void> {
  const admin = new Client({ connectionString: `postgres://postgres@127.0.0.1:${port}/postgres` });
  await admin.connect();
  try {
    await admin.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  } finally {
    await admin.end();
  }
}

/** Starts the cluster; `sourceUrl` is the server it stands in for (its settings copied) and names the database. */
export async function startOwnCluster(sourceUrl: string): Promise<OwnCluster> {
  const bin = binDir();
  const { locale, ...copied } = await settingsOf(sourceUrl);
  const user = runAs();
  const run = runner(bin, user);
  const dir = mkdtempSync(join(tmpdir(), 'isp-bench-cluster-'));
  const data = join(dir, 'data');
  let started = false;
  const stop = (): Promise<void> => {
    if (started) {
      try {
        run('pg_ctl', ['stop', '-D', data, '-m', 'fast', '-w']);
      } catch {
        // already gone
      }
      started = false;
    }
    rmSync(dir, { recursive: true, force: true });
    return Promise.resolve();
  };
  try {
    if (user) {
      chownSync(dir, user.uid, user.gid);
    }
    run('initdb', [
      '-D',
      data,
      '-U',
      'postgres',
      '--auth=trust',
      '--no-sync',
      '-E',
      'UTF8',
      `--locale=${locale}`,
    ]);
    const port = await freePort();
    const conf = join(data, 'postgresql.conf');
    writeFileSync(conf, `${readFileSync(conf, 'utf8')}\n${configLines(dir, port, copied).join('\n')}\n`);
    run('pg_ctl', ['start', '-D', data, '-l', join(dir, 'postgres.log'), '-w', '-t', '60']);
    started = true;
    const postmasterPid = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
    await createExtension(port);
    const url = new URL(sourceUrl);
    url.username = 'postgres';
    url.password = '';
    url.host = `127.0.0.1:${port}`;
    url.search = '';
    return { url: url.toString(), postmasterPid, settings: copied, stop };
  } catch (error) {
    const logFile = join(dir, 'postgres.log');
    const tail = existsSync(logFile) ? readFileSync(logFile, 'utf8').slice(-2000) : '';
    await stop();
    const stderr = (error as { stderr?: string }).stderr ?? '';
    throw new Error(
      `--own-cluster: could not start the cluster: ${(error as Error).message}\n${stderr}\n${tail}`,
    );
  }
}
