import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { Client } from 'pg';
import { endsIdle } from '../../src/database/embedded-exchange-queue';

/** Where a `pg` url leads: the socket file when its host is a folder (the embedded database's), else host and port. */
function address(url: URL): { path: string } | { host: string; port: number } {
  const host = decodeURIComponent(url.hostname);
  const port = Number(url.port || 5432);
  return host.startsWith('/') ? { path: join(host, `.s.PGSQL.${port}`) } : { host, port };
}

function message(type: string, body: Buffer): Buffer {
  const header = Buffer.alloc(5);
  header.write(type, 0, 'latin1');
  header.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([header, body]);
}

/** A raw connection that has finished its start-up (the session answered ReadyForQuery). */
async function rawConnection(databaseUrl: string): Promise<Socket> {
  const url = new URL(databaseUrl);
  const socket = connect(address(url));
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  const user = decodeURIComponent(url.username) || 'postgres';
  const database = decodeURIComponent(url.pathname.slice(1)) || user;
  const params = Buffer.from(`user\0${user}\0database\0${database}\0\0`, 'latin1');
  const startup = Buffer.alloc(8);
  startup.writeInt32BE(params.length + 8, 0);
  startup.writeInt32BE(196608, 4);
  socket.write(Buffer.concat([startup, params]));
  await new Promise<void>((resolve) => {
    let seen = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      seen = Buffer.concat([seen, chunk]);
      if (endsIdle(seen)) {
        socket.off('data', onData);
        resolve();
      }
    };
    socket.on('data', onData);
  });
  return socket;
}

/**
 * The embedded database is one PGlite session served to many connections (src/database/embedded-exchange-queue.ts):
 * the suites' apps, their workers and the tests' own clients share it. Each connection must get the answers a
 * Postgres server would give it. Runs on a Postgres server too, where it holds by construction.
 */
describe('Connections sharing the database', () => {
  const url = process.env.DATABASE_URL as string;
  const items = `exchange_items_${process.pid}`;
  const clients: Client[] = [];

  async function client(): Promise<Client> {
    const each = new Client({ connectionString: url });
    await each.connect();
    clients.push(each);
    return each;
  }

  beforeAll(async () => {
    const setup = await client();
    await setup.query(`CREATE TABLE ${items} (id text PRIMARY KEY, n int NOT NULL)`);
  });
  afterAll(async () => {
    await clients[0]?.query(`DROP TABLE IF EXISTS ${items}`);
    await Promise.all(clients.map((each) => each.end().catch(() => undefined)));
  });

  it('should answer each connection its own statement while others send theirs at the same time', async () => {
    const [writer, ...readers] = await Promise.all([client(), client(), client(), client()]);
    const wrong: string[] = [];
    let stop = false;
    const write = async () => {
      for (let i = 0; i < 150; i += 1) {
        await writer.query('BEGIN');
        await writer.query(`INSERT INTO ${items} VALUES ($1, $2)`, [`w${i}`, i]);
        await writer.query('COMMIT');
        const { rows } = await writer.query<{ n: number }>(`SELECT n FROM ${items} WHERE id = $1`, [`w${i}`]);
        if (rows[0]?.n !== i) {
          wrong.push(`writer read ${JSON.stringify(rows)} for w${i}`);
        }
      }
    };
    const read = async (reader: Client, k: number) => {
      for (let j = 0; !stop; j += 1) {
        const { rows } = await reader.query<{ v: number }>(
          `SELECT $1::int + ${k} AS v, count(*) FROM ${items} WHERE n > $2`,
          [j, -1],
        );
        if (rows[0]?.v !== j + k) {
          wrong.push(`reader ${k} read ${JSON.stringify(rows)} for ${j}`);
        }
      }
    };
    const reading = readers.map((reader, k) => read(reader, k));
    await write().finally(() => {
      stop = true;
    });
    await Promise.all(reading);
    expect(wrong).toEqual([]);
  }, 60_000);

  it('should not let another connection see or join an open transaction', async () => {
    const [a, b] = await Promise.all([client(), client()]);
    await a.query('BEGIN');
    await a.query(`INSERT INTO ${items} VALUES ('uncommitted', 1)`);
    const seen = b.query(`SELECT count(*)::int AS n FROM ${items} WHERE id = 'uncommitted'`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await a.query('ROLLBACK');
    expect((await seen).rows[0].n).toBe(0);
  });

  it('should roll back the transaction of a connection that goes away, and serve the others', async () => {
    const [a, b] = await Promise.all([client(), client()]);
    a.on('error', () => undefined); // its connection is cut below
    await a.query('BEGIN');
    await a.query(`INSERT INTO ${items} VALUES ('abandoned', 1)`);
    const waiting = b.query(`SELECT count(*)::int AS n FROM ${items} WHERE id = 'abandoned'`);
    (a as unknown as { connection: { stream: Socket } }).connection.stream.destroy();
    expect((await waiting).rows[0].n).toBe(0);
  });

  it('should serve the others when a connection goes away in the middle of a batch (Parse sent, no Sync)', async () => {
    const raw = await rawConnection(url);
    const other = await client();
    const parse = message('P', Buffer.from('\0SELECT 1\0\0\0', 'latin1'));
    const parsed = new Promise((resolve) => raw.once('data', resolve));
    raw.write(Buffer.concat([parse, message('H', Buffer.alloc(0))])); // Flush: a server answers the Parse now
    await parsed;
    const waiting = other.query<{ v: number }>('SELECT $1::int AS v', [7]);
    raw.destroy();
    expect((await waiting).rows[0].v).toBe(7);
  });
});
