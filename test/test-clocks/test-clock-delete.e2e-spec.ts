import request from 'supertest';
import { createInvoice, createPayment } from '../support/billing-factory';
import { expectError, expectSuccess } from '../support/envelope';
import { bearer } from '../support/factories';
import { importAndWait } from '../support/import-factory';
import { createPool } from '../support/ipam-factory';
import { createNas, insertRadacct, uniqueAcctSessionId } from '../support/network-factory';
import { createPlan, createService, getService, uniquePppoeUsername } from '../support/provisioning-factory';
import { createBillingProfile, createSubscriber } from '../support/subscriber-factory';
import {
  createTenantWithToken,
  ensure,
  startTestApp,
  type TenantWithToken,
  type TestApp,
} from '../support/test-app';
import { createTicket } from '../support/ticket-factory';
import { createWebhook, deleteAllWebhooks } from '../support/webhook-receiver';
import { waitFor } from '../support/wait-for';

type Body = Record<string, unknown>;

interface Clock {
  id: string;
  status: string;
  tenant_id: string;
  token: string;
}

/** What a tenant was given by `populate`: the rows the purge must find outside the tables with a tenant_id. */
interface Populated {
  radiusUsername: string;
  nasIp: string;
  importId: string;
  radacctId: string;
}

/**
 * Issue #32 item 5: DELETE /api/v1/test-clocks/{id} deletes the clock, its test tenant and every row of that tenant
 * (docs/test-clocks.md), in one transaction; the clock's owner and every other tenant keep theirs.
 */
describe('Test clocks: DELETE (e2e)', () => {
  let t: TestApp;
  let owner: TenantWithToken;
  let other: TenantWithToken;

  beforeAll(async () => {
    t = await startTestApp({
      BILLING_SCHEDULER_ENABLED: 'false',
      PROVISIONING_POLL_MS: '50',
      IMPORT_POLL_MS: '50',
      // Deliveries and notifications stay queued (nothing leaves the machine) and the rules do not react: once made,
      // no tenant's rows change by themselves, so the counts before and after the deletion compare.
      WEBHOOK_WORKER_ENABLED: 'false',
      NOTIFICATION_WORKER_ENABLED: 'false',
      AUTOMATION_ENABLED: 'false',
      WEBHOOK_ALLOW_PRIVATE: 'true',
    });
    owner = await createTenantWithToken(t);
    other = await createTenantWithToken(t);
  });

  afterAll(async () => {
    await deleteAllWebhooks(t.http, t.adminToken, other.tenantId);
    await t.close();
  });

  const api = (token: string, headers: Record<string, string> = {}) => ({
    get: (path: string) => request(t.http).get(`/api/v1${path}`).set(bearer(token)).set(headers),
    post: (path: string, body: Body = {}) =>
      request(t.http).post(`/api/v1${path}`).set(bearer(token)).set(headers).send(body),
    patch: (path: string, body: Body) =>
      request(t.http).patch(`/api/v1${path}`).set(bearer(token)).set(headers).send(body),
    delete: (path: string) => request(t.http).delete(`/api/v1${path}`).set(bearer(token)).set(headers),
  });

  async function createClock(name = 'Purge rehearsal'): Promise<Clock> {
    const res = await api(owner.token).post('/test-clocks', {
      name,
      frozen_time: '2032-03-01T00:00:00.000Z',
    });
    return ensure(res, 201, 'create test clock').body.data as Clock;
  }

  /**
   * One record or more of every kind a tenant can have: a profile, a subscriber with an active service (its RADIUS
   * rows written by the provisioning worker) and a session of it, an invoice (its notification queued), a payment
   * allocated to it, a ticket with a comment, a webhook with a delivery, a NAS (FreeRADIUS's client row), an import,
   * a second token, its settings, a rule setting, an idempotency key.
   */
  async function populate(token: string): Promise<Populated> {
    const call = api(token);
    const profile = await createBillingProfile(t, token, { name: 'Residential', currency: 'USD' });
    const subscriber = await createSubscriber(t, token, { billing_profile_id: profile.id });
    const plan = await createPlan(t, token, { price: 2500, currency: 'USD', billing_period: 'monthly' });
    const pool = await createPool(t, token);
    const { service } = await createService(t, token, subscriber.id, {
      plan_id: plan.id,
      pppoe_username: uniquePppoeUsername('purge'),
      ip_pool_id: pool.id,
    });
    await waitFor(async () => (await getService(t, token, service.id)).status === 'active', {
      what: 'service active',
    });
    const invoice = await createInvoice(t, token, subscriber.id, 4000);
    await createPayment(t, token, subscriber.id, 1500);
    expect(invoice.status).toBe('open');
    const ticket = await createTicket(t, token, { subscriber_id: subscriber.id });
    ensure(
      await call.post(`/tickets/${ticket.id}/comments`, {
        author: 'noc',
        author_type: 'agent',
        body: 'On it.',
        public: true,
      }),
      201,
      'comment',
    );
    const invite = ensure(await call.post(`/subscribers/${subscriber.id}/portal-invites`), 201, 'invite');
    ensure(
      await request(t.http).post('/api/v1/portal/sessions').send({ invite_code: invite.body.data.code }),
      201,
      'portal session',
    );
    ensure(await call.post(`/subscribers/${subscriber.id}/portal-invites`), 201, 'second invite');
    await createWebhook(t.http, token, { url: 'https://hooks.example.net/isp', events: ['*'] });
    const nas = await createNas(t, token);
    const job = await importAndWait(
      t,
      token,
      `external_id,full_name,status\nimp-${Date.now()},Imported,prospect\n`,
    );
    ensure(await call.post('/tokens', { name: 'second', scopes: ['subscribers:read'] }), 201, 'token');
    ensure(await call.patch('/tenant/settings', { legal_name: 'Purge Fiber' }), 200, 'settings');
    ensure(await call.patch('/automation/rules/overdue_invoices', { enabled: false }), 200, 'rule');
    ensure(
      await api(token, { 'X-Idempotency-Key': `purge-${Date.now()}-${Math.random()}` }).post('/subscribers', {
        full_name: 'Keyed Subscriber',
        status: 'prospect',
      }),
      201,
      'keyed create',
    );
    const radacctId = await insertRadacct(t, {
      acctsessionid: uniqueAcctSessionId(),
      username: service.radius_username,
      nasipaddress: nas.ip,
      acctstarttime: new Date(),
      acctinputoctets: 1000,
    });
    return { radiusUsername: service.radius_username, nasIp: nas.ip, importId: job.id, radacctId };
  }

  /** Every table of the schema with a tenant_id column: a table added later is counted without being named here. */
  async function tenantTables(): Promise<string[]> {
    const rows = await t.dataSource.query<{ table_name: string }[]>(
      `SELECT c.table_name FROM information_schema.columns c
         JOIN information_schema.tables tb ON tb.table_schema = c.table_schema AND tb.table_name = c.table_name
        WHERE c.table_schema = current_schema() AND c.column_name = 'tenant_id' AND tb.table_type = 'BASE TABLE'
        ORDER BY c.table_name`,
    );
    return rows.map((row) => row.table_name);
  }

  /** The tenant's row count in every table with a tenant_id, and its tenants row. */
  async function countsOf(tenantId: string): Promise<Record<string, number>> {
    const counts: Record<string, number> = {};
    for (const table of await tenantTables()) {
      const [{ n }] = await t.dataSource.query<{ n: number }[]>(
        `SELECT count(*)::int AS n FROM ${table} WHERE tenant_id = $1`,
        [tenantId],
      );
      counts[table] = n;
    }
    const [{ n }] = await t.dataSource.query<{ n: number }[]>(
      'SELECT count(*)::int AS n FROM tenants WHERE id = $1',
      [tenantId],
    );
    counts.tenants = n;
    return counts;
  }

  /** The rows a tenant has in FreeRADIUS's tables and import_rows, which have no tenant_id. */
  async function untenanted(tenantId: string, given: Populated): Promise<Record<string, number>> {
    const count = async (sql: string, params: unknown[]) =>
      (await t.dataSource.query<{ n: number }[]>(sql, params))[0].n;
    const counts: Record<string, number> = {};
    for (const table of ['radcheck', 'radreply', 'radusergroup', 'radacct']) {
      counts[table] = await count(`SELECT count(*)::int AS n FROM ${table} WHERE username = $1`, [
        given.radiusUsername,
      ]);
    }
    counts.radacct_daily_usage = await count(
      'SELECT count(*)::int AS n FROM radacct_daily_usage WHERE radacctid = $1',
      [given.radacctId],
    );
    counts.nas = await count('SELECT count(*)::int AS n FROM nas WHERE nasname = $1', [given.nasIp]);
    counts.import_rows = await count('SELECT count(*)::int AS n FROM import_rows WHERE import_id = $1', [
      given.importId,
    ]);
    counts.test_clocks_owned = await count(
      'SELECT count(*)::int AS n FROM test_clocks WHERE tenant_id = $1 OR owner_tenant_id = $1',
      [tenantId],
    );
    return counts;
  }

  const nonZero = (counts: Record<string, number>) =>
    Object.entries(counts)
      .filter(([, n]) => n > 0)
      .map(([table]) => table);

  it('should delete the clock, its test tenant and every row of it, and leave every other tenant as it was', async () => {
    const clock = await createClock('Purged');
    const sibling = await createClock('Kept');
    const given = await populate(clock.token);
    const siblingGiven = await populate(sibling.token);
    const otherGiven = await populate(other.token);

    // The world is real: the test tenant has rows in most tables, and FreeRADIUS rows for its service.
    const before = await countsOf(clock.tenant_id);
    expect(nonZero(before)).toEqual(
      expect.arrayContaining([
        'allocations',
        'api_tokens',
        'automation_rule_settings',
        'billing_profiles',
        'events',
        'idempotency_keys',
        'imports',
        'invoices',
        'ip_allocations',
        'ip_pools',
        'ledger_entries',
        'nas_devices',
        'notifications',
        'portal_invites',
        'portal_sessions',
        'provisioning_orders',
        'service_plans',
        'services',
        'subscribers',
        'tenant_settings',
        'tenants',
        'test_clocks',
        'ticket_comments',
        'tickets',
        'transactions',
        'webhook_deliveries',
        'webhooks',
      ]),
    );
    expect(nonZero(await untenanted(clock.tenant_id, given))).toEqual(
      expect.arrayContaining([
        'radcheck',
        'radreply',
        'radacct',
        'radacct_daily_usage',
        'nas',
        'test_clocks_owned',
      ]),
    );
    const kept = {
      owner: await countsOf(owner.tenantId),
      other: await countsOf(other.tenantId),
      otherUntenanted: await untenanted(other.tenantId, otherGiven),
      sibling: await countsOf(sibling.tenant_id),
      siblingUntenanted: await untenanted(sibling.tenant_id, siblingGiven),
    };
    const ownerEvents = kept.owner.events;

    const res = await api(owner.token).delete(`/test-clocks/${clock.id}`);
    expectSuccess(res);
    expect(res.body.data).toMatchObject({ id: clock.id, status: 'ready', tenant_id: clock.tenant_id });

    // Every table with a tenant_id holds nothing of the purged tenant, nor do FreeRADIUS's tables or import_rows.
    expect(nonZero(await countsOf(clock.tenant_id))).toEqual([]);
    expect(nonZero(await untenanted(clock.tenant_id, given))).toEqual([]);

    // The owner gained its test_clock.deleted event and nothing else; the other tenants kept every row.
    expect(await countsOf(owner.tenantId)).toEqual({ ...kept.owner, events: ownerEvents + 1 });
    expect(await countsOf(other.tenantId)).toEqual(kept.other);
    expect(await untenanted(other.tenantId, otherGiven)).toEqual(kept.otherUntenanted);
    expect(await countsOf(sibling.tenant_id)).toEqual(kept.sibling);
    expect(await untenanted(sibling.tenant_id, siblingGiven)).toEqual(kept.siblingUntenanted);

    const events = await api(owner.token).get('/events?type=test_clock.deleted&limit=100');
    const deleted = (ensure(events, 200, 'events').body.data as { data: { object: Body } }[]).map(
      (event) => event.data.object,
    );
    expect(deleted).toContainEqual(expect.objectContaining({ id: clock.id, tenant_id: clock.tenant_id }));

    // The sibling's tenant still works with its token; the purged one's token is refused at once.
    expectSuccess(await api(sibling.token).get('/me'));
    expectError(await api(clock.token).get('/me'), 401, 'invalid_token');
  });

  it('should refuse the purged tenant to the platform admin, and answer 404 for the clock afterwards', async () => {
    const clock = await createClock('Gone');
    expectSuccess(await api(clock.token).get('/me'));
    expectSuccess(await api(owner.token).delete(`/test-clocks/${clock.id}`));
    expectError(await api(clock.token).get('/subscribers'), 401, 'invalid_token');
    expectError(
      await api(t.adminToken, { 'X-Tenant-ID': clock.tenant_id }).get('/subscribers'),
      403,
      'tenant_forbidden',
    );
    expectError(await api(owner.token).get(`/test-clocks/${clock.id}`), 404, 'not_found');
    expectError(await api(owner.token).delete(`/test-clocks/${clock.id}`), 404, 'not_found');
    expectError(
      await api(owner.token).post(`/test-clocks/${clock.id}/advance`, { to: '2032-04-01T00:00:00.000Z' }),
      404,
      'not_found',
    );
    const listed = (await api(owner.token).get('/test-clocks?limit=100')).body.data as { id: string }[];
    expect(listed.map((entry) => entry.id)).not.toContain(clock.id);
  });

  it('should answer 409 test_clock_advancing while the clock advances, and delete it once ready', async () => {
    const clock = await createClock('Advancing');
    const subscriber = await createSubscriber(t, clock.token);
    // An advance under way on another instance: its lease runs for an hour, so this instance's advancer leaves it.
    await t.dataSource.query(
      `UPDATE test_clocks SET status = 'advancing', advance_to = frozen_time + interval '1 day',
              lease_id = gen_random_uuid(), lease_until = now() + interval '1 hour' WHERE id = $1`,
      [clock.id],
    );
    expectError(await api(owner.token).delete(`/test-clocks/${clock.id}`), 409, 'test_clock_advancing');
    // Nothing was deleted: the tenant, its subscriber and its token are all there.
    expectSuccess(await api(clock.token).get(`/subscribers/${subscriber.id}`));
    expect((await api(owner.token).get(`/test-clocks/${clock.id}`)).body.data.status).toBe('advancing');
    await t.dataSource.query(
      `UPDATE test_clocks SET status = 'ready', advance_to = NULL, lease_id = NULL, lease_until = NULL WHERE id = $1`,
      [clock.id],
    );
    expectSuccess(await api(owner.token).delete(`/test-clocks/${clock.id}`));
    expect(nonZero(await countsOf(clock.tenant_id))).toEqual([]);
  });

  it('should delete a clock that stopped on a failure', async () => {
    const clock = await createClock('Failed');
    await t.dataSource.query(`UPDATE test_clocks SET status = 'internal_failure' WHERE id = $1`, [clock.id]);
    const res = await api(owner.token).delete(`/test-clocks/${clock.id}`);
    expectSuccess(res);
    expect(res.body.data.status).toBe('internal_failure');
    expect(nonZero(await countsOf(clock.tenant_id))).toEqual([]);
  });

  it('should answer 404 to another tenant, 403 without admin and 401 without a token, deleting nothing', async () => {
    const clock = await createClock('Guarded');
    expectError(await api(other.token).delete(`/test-clocks/${clock.id}`), 404, 'not_found');
    const reader = await createTenantWithToken(t, ['subscribers:read']);
    expectError(await api(reader.token).delete(`/test-clocks/${clock.id}`), 403, 'insufficient_scope');
    expectError(
      await request(t.http).delete(`/api/v1/test-clocks/${clock.id}`),
      401,
      'authentication_required',
    );
    // The test tenant cannot delete its own clock: it is not the clock's owner.
    expectError(await api(clock.token).delete(`/test-clocks/${clock.id}`), 404, 'not_found');
    expectSuccess(await api(clock.token).get('/me'));
    expect((await api(owner.token).get(`/test-clocks/${clock.id}`)).status).toBe(200);
  });

  it('should never purge a live tenant: a clock bound to one is refused and nothing is deleted', async () => {
    const clock = await createClock('Tampered');
    const live = await createTenantWithToken(t);
    const subscriber = await createSubscriber(t, live.token);
    // A clock pointed at a live tenant (only a broken row could say so): the deletion must refuse to purge it.
    await t.dataSource.query('UPDATE test_clocks SET tenant_id = $2 WHERE id = $1', [
      clock.id,
      live.tenantId,
    ]);
    const before = await countsOf(live.tenantId);
    try {
      const res = await api(owner.token).delete(`/test-clocks/${clock.id}`);
      expectError(res, 500, 'internal_error');
      expect(await countsOf(live.tenantId)).toEqual(before);
      expectSuccess(await api(live.token).get(`/subscribers/${subscriber.id}`));
    } finally {
      await t.dataSource.query('UPDATE test_clocks SET tenant_id = $2 WHERE id = $1', [
        clock.id,
        clock.tenant_id,
      ]);
    }
    // Bound to its own test tenant again, it is deleted as any.
    expectSuccess(await api(owner.token).delete(`/test-clocks/${clock.id}`));
    expect(nonZero(await countsOf(clock.tenant_id))).toEqual([]);
    expectSuccess(await api(live.token).get(`/subscribers/${subscriber.id}`));
  });
});
