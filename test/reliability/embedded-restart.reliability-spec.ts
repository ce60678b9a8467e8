import request from 'supertest';
import { expectError, expectList, expectSuccess } from '../support/envelope';
import { bearer } from '../support/factories';
import { stoppedAfterEach, tempDirs } from '../support/lifecycle';
import { startServerProcess, type ProcessEnd, type ServerChild } from '../support/server-process';
import { BOOTSTRAP_TOKEN, createTenant, issueToken, uniqueSlug } from '../support/test-app';

// Each server compiles the app and opens PGlite: a few seconds apiece.
const TIMEOUT_MS = 120_000;

describe('Embedded database in DATA_DIR', () => {
  const freshDataDir = tempDirs('isp-api-e2e-');
  const servers = stoppedAfterEach((server: ServerChild) => server.stop(), TIMEOUT_MS);

  async function start(dataDir: string): Promise<ServerChild> {
    const server = await startServerProcess(dataDir);
    servers.push(server);
    return server;
  }

  async function stop(server: ServerChild): Promise<ProcessEnd> {
    servers.splice(servers.indexOf(server), 1);
    await server.stop();
    return server.ended;
  }

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
      const created = await createTenant(first.url, slug);
      const issued = await issueToken(first.url, slug, ['events:read'], 'kept');
      expect(await stop(first)).toEqual({ code: 0, signal: null, stderr: '' });

      const second = await start(dataDir);
      const listed = await request(second.url).get('/api/v1/tenants?limit=100').set(bearer(BOOTSTRAP_TOKEN));
      expectList(listed);
      expect(listed.body.data).toContainEqual(created);

      const me = await request(second.url).get('/api/v1/me').set(bearer(issued.token));
      expectSuccess(me);
      expect(me.body.data).toMatchObject({ token_id: issued.id, tenant_id: created.id });

      const events = await request(second.url)
        .get('/api/v1/events?type=tenant.created')
        .set(bearer(issued.token));
      expectList(events);
      expect(events.body.data.map((event: { subject_id: string }) => event.subject_id)).toEqual([created.id]);
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
      await createTenant(holder.url);
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
