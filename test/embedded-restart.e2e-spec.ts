import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { expectError, expectList, expectSuccess } from './support/envelope';
import { bearer } from './support/factories';
import { startServerProcess, type ProcessEnd, type ServerProcess } from './support/server-process';
import { BOOTSTRAP_TOKEN, uniqueSlug } from './support/test-app';

// Each server compiles the app and opens PGlite: a few seconds apiece.
const TIMEOUT_MS = 120_000;

describe('Embedded database in DATA_DIR', () => {
  const dataDirs: string[] = [];
  const servers: ServerProcess[] = [];

  function freshDataDir(): string {
    const dir = mkdtempSync(join(tmpdir(), 'isp-api-e2e-'));
    dataDirs.push(dir);
    return dir;
  }

  async function start(dataDir: string): Promise<ServerProcess> {
    const server = await startServerProcess(dataDir);
    servers.push(server);
    return server;
  }

  async function stop(server: ServerProcess): Promise<ProcessEnd> {
    servers.splice(servers.indexOf(server), 1);
    return server.stop();
  }

  afterEach(async () => {
    for (const server of servers.splice(0)) {
      await server.stop();
    }
  }, TIMEOUT_MS);
  afterAll(() => {
    for (const dir of dataDirs) {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it(
    'should require authentication',
    async () => {
      const server = await start(freshDataDir());
      expectError(await request(server.url).get('/api/v1/tenants'), 401, 'authentication_required');
    },
    TIMEOUT_MS,
  );

  it(
    'should keep tenants, tokens and events across a restart',
    async () => {
      const dataDir = freshDataDir();
      const slug = uniqueSlug();

      const first = await start(dataDir);
      const created = await request(first.url)
        .post('/api/v1/tenants')
        .set(bearer(BOOTSTRAP_TOKEN))
        .send({ slug, name: 'Survives restarts' });
      expectSuccess(created, 201);
      const issued = await request(first.url)
        .post('/api/v1/tokens')
        .set(bearer(BOOTSTRAP_TOKEN))
        .send({ tenant: slug, name: 'kept', scopes: ['events:read'] })
        .expect(201);
      expect(await stop(first)).toEqual({ code: 0, signal: null, stderr: '' });

      const second = await start(dataDir);
      const listed = await request(second.url).get('/api/v1/tenants?limit=100').set(bearer(BOOTSTRAP_TOKEN));
      expectList(listed);
      expect(listed.body.data).toContainEqual(created.body.data);

      const me = await request(second.url).get('/api/v1/me').set(bearer(issued.body.data.token));
      expectSuccess(me);
      expect(me.body.data).toMatchObject({ token_id: issued.body.data.id, tenant_id: created.body.data.id });

      const events = await request(second.url)
        .get('/api/v1/events?type=tenant.created')
        .set(bearer(issued.body.data.token));
      expectList(events);
      expect(events.body.data.map((event: { subject_id: string }) => event.subject_id)).toEqual([
        created.body.data.id,
      ]);
    },
    TIMEOUT_MS,
  );

  it(
    'should refuse a second server on a data folder in use, and leave the first serving',
    async () => {
      const dataDir = freshDataDir();
      const holder = await start(dataDir);

      await expect(start(dataDir)).rejects.toThrow(/The data folder .* is in use by another process/);

      expectSuccess(await request(holder.url).get('/health/ready'));
      const tenant = await request(holder.url)
        .post('/api/v1/tenants')
        .set(bearer(BOOTSTRAP_TOKEN))
        .send({ slug: uniqueSlug(), name: 'Still writable' });
      expectSuccess(tenant, 201);
    },
    TIMEOUT_MS,
  );

  it(
    'should open the data folder again once the server holding it has stopped',
    async () => {
      const dataDir = freshDataDir();
      const first = await start(dataDir);
      expect(await stop(first)).toEqual({ code: 0, signal: null, stderr: '' });

      const again = await start(dataDir);
      expectSuccess(await request(again.url).get('/health/ready'));
    },
    TIMEOUT_MS,
  );
});
