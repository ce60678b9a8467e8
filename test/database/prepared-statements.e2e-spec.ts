import { Client } from 'pg';
import request from 'supertest';
import { expectSuccess } from '../support/envelope';
import { bearer } from '../support/factories';
import { createSubscriber, SUBSCRIBER_SCOPES } from '../support/subscriber-factory';
import { createTenantWithToken, startTestApp, type TenantWithToken, type TestApp } from '../support/test-app';

/** Issue #11 item 9: a migration adding a column while instances run must not break their prepared statements. */
describe('Prepared statements across a schema change', () => {
  let t: TestApp;
  let tenant: TenantWithToken;
  let migrator: Client;
  const column = `rolling_deploy_${process.pid}`;

  beforeAll(async () => {
    // One connection, so every request runs on the connection that prepared the statement.
    t = await startTestApp({ DATABASE_POOL_MAX: '1' });
    tenant = await createTenantWithToken(t, SUBSCRIBER_SCOPES);
    migrator = new Client({ connectionString: process.env.DATABASE_URL });
    await migrator.connect();
  });
  afterAll(async () => {
    await migrator.query(`ALTER TABLE subscribers DROP COLUMN IF EXISTS ${column}`);
    await migrator.end();
    await t.close();
  });

  it('should keep answering GET /subscribers/{id} after another connection adds a column to subscribers', async () => {
    const subscriber = await createSubscriber(t, tenant.token);
    const get = () => request(t.http).get(`/api/v1/subscribers/${subscriber.id}`).set(bearer(tenant.token));
    expectSuccess(await get());
    expectSuccess(await get());

    await migrator.query(`ALTER TABLE subscribers ADD COLUMN ${column} text`);

    const after = await get();
    expectSuccess(after);
    expect(after.body.data.id).toBe(subscriber.id);
    expect(after.body.data).not.toHaveProperty(column);
  });

  it('should keep creating subscribers after another connection adds a column to subscribers', async () => {
    await createSubscriber(t, tenant.token);
    await migrator.query(`ALTER TABLE subscribers ADD COLUMN IF NOT EXISTS ${column} text`);
    const created = await createSubscriber(t, tenant.token);
    const res = await request(t.http).get(`/api/v1/subscribers/${created.id}`).set(bearer(tenant.token));
    expectSuccess(res);
  });
});
