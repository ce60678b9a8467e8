import { spawn } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { stoppedAfterEach, tempDirs } from '../support/lifecycle';
import { type EmbeddedHost, startEmbeddedHost } from '../support/server-process';

const TIMEOUT_MS = 120_000;
const NOBODY = 65534;

/** Runs `script` with node as another local user (nobody) and answers what it printed. */
function runAsAnotherUser(script: string, env: Record<string, string>): Promise<string> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ['-e', script], { cwd: '/', uid: NOBODY, gid: NOBODY, env });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('error', fail);
    child.on('close', () => done(out));
  });
}

/** Connects to `url` and runs `SELECT 1` as another local user (nobody): what any other process could do. */
function connectAsAnotherUser(url: string): Promise<string> {
  const script = `
    const { Client } = require(${JSON.stringify(require.resolve('pg'))});
    const client = new Client({ connectionString: process.env.DB_URL, connectionTimeoutMillis: 5000 });
    client.connect().then(() => client.query('SELECT 1')).then(
      () => { process.stdout.write('connected'); return client.end(); },
      (error) => process.stdout.write('refused: ' + (error.code || error.message)),
    );`;
  return runAsAnotherUser(script, { DB_URL: url });
}

async function showSetting(url: string, name: string): Promise<string> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<Record<string, string>>(`SHOW ${name}`)).rows[0][name];
  } finally {
    await client.end();
  }
}

/** The most resident memory a process has had (VmHWM), in MB. */
function peakRssMb(pid: number): number {
  return Number(/^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
}

async function connectAsTheApp(url: string): Promise<string> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<{ answer: number }>('SELECT 1 AS answer')).rows[0].answer === 1
      ? 'connected'
      : '?';
  } finally {
    await client.end();
  }
}

/** TCP ports a process listens on, from its socket inodes and /proc/net/tcp{,6}. */
function listeningTcpPorts(pid: number): number[] {
  const inodes = new Set(
    readdirSync(`/proc/${pid}/fd`)
      .map((fd) => {
        try {
          return /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1];
        } catch {
          return undefined;
        }
      })
      .filter((inode): inode is string => inode !== undefined),
  );
  return ['/proc/net/tcp', '/proc/net/tcp6'].flatMap((table) =>
    readFileSync(table, 'utf8')
      .trim()
      .split('\n')
      .slice(1)
      .map((line) => line.trim().split(/\s+/))
      .filter((cols) => cols[3] === '0A' && inodes.has(cols[9])) // 0A: LISTEN
      .map((cols) => parseInt(cols[1].split(':')[1], 16)),
  );
}

describe('Embedded database', () => {
  const freshDataDir = tempDirs('isp-api-embedded-');
  const hosts = stoppedAfterEach((started: EmbeddedHost) => started.stop(), TIMEOUT_MS);

  async function host(dataDir: string | null): Promise<EmbeddedHost> {
    const started = await startEmbeddedHost(dataDir);
    hosts.push(started);
    return started;
  }

  describe.each([
    ['in DATA_DIR', true],
    ['in memory', false],
  ])('served %s', (_where, onDisk) => {
    it(
      'should refuse a client of another local user, and let the app in',
      async () => {
        const db = await host(onDisk ? freshDataDir() : null);
        expect(await connectAsAnotherUser(db.url)).toBe('refused: EACCES');
        expect(await connectAsTheApp(db.url)).toBe('connected');
      },
      TIMEOUT_MS,
    );

    it(
      'should listen on no TCP port, only on a socket file of mode 0600 in a folder of mode 0700',
      async () => {
        const db = await host(onDisk ? freshDataDir() : null);
        expect(listeningTcpPorts(db.child.pid!)).toEqual([]);

        const url = new URL(db.url);
        const folder = decodeURIComponent(url.hostname);
        const socket = join(folder, `.s.PGSQL.${url.port}`);
        expect(statSync(folder).mode & 0o777).toBe(0o700);
        expect(statSync(socket).isSocket()).toBe(true);
        expect(statSync(socket).mode & 0o777).toBe(0o600);
      },
      TIMEOUT_MS,
    );

    it(
      "should hold 16MB of shared buffers, not initdb's 128MB, all of which would be resident",
      async () => {
        const db = await host(onDisk ? freshDataDir() : null);
        expect(await showSetting(db.url, 'shared_buffers')).toBe('16MB');
      },
      TIMEOUT_MS,
    );
  });

  it(
    'should run initdb of an empty DATA_DIR in a process of its own, clearing what an interrupted one left',
    async () => {
      const dataDir = freshDataDir();
      mkdirSync(join(dataDir, 'pgdata.initdb'));
      writeFileSync(join(dataDir, 'pgdata.initdb', 'PG_VERSION'), 'half made');
      const db = await host(dataDir);
      expect(await connectAsTheApp(db.url)).toBe('connected');
      expect(existsSync(join(dataDir, 'pgdata.initdb'))).toBe(false);
      expect(readFileSync(join(dataDir, 'pgdata', 'PG_VERSION'), 'utf8').trim()).toMatch(/^\d+$/);
      // initdb in the host itself peaks at ~900 MB, and that memory stays with the process.
      expect(peakRssMb(db.child.pid!)).toBeLessThan(600);
    },
    TIMEOUT_MS,
  );

  it(
    'should keep the data files in DATA_DIR out of reach of other local users',
    async () => {
      const dataDir = freshDataDir();
      chmodSync(dataDir, 0o755); // as `mkdir data` makes it
      await host(dataDir);
      const script = `
        const fs = require('fs');
        for (const mode of ['r', 'r+']) {
          try { fs.closeSync(fs.openSync(process.env.FILE, mode)); process.stdout.write(mode + ': opened;'); }
          catch (error) { process.stdout.write(mode + ': ' + error.code + ';'); }
        }`;
      const controlFile = join(dataDir, 'pgdata', 'global', 'pg_control');
      expect(await runAsAnotherUser(script, { FILE: controlFile })).toBe('r: EACCES;r+: EACCES;');
    },
    TIMEOUT_MS,
  );

  it(
    'should fsync the write-ahead log before it acknowledges a commit in DATA_DIR',
    async () => {
      const db = await host(freshDataDir());
      const committed = await db.send({ type: 'commit' });
      expect(committed).toMatchObject({ type: 'committed' });
      expect(committed.walFsyncs).toBeGreaterThanOrEqual(1);
    },
    TIMEOUT_MS,
  );
});
