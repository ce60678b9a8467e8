import request from 'supertest';
import { expectError, expectSuccess } from '../support/envelope';
import { bearer } from '../support/factories';
import {
  FAST_COA,
  FAST_WORKER,
  insertRadacct,
  type Nas,
  nasBody,
  type NetworkOrder,
  postNas,
  randomLoopback,
  uniqueAcctSessionId,
  uniqueSecret,
} from '../support/network-factory';
import {
  createPlan,
  createService,
  DEFAULT_PPPOE_PASSWORD,
  expectedRows,
  getService,
  postAction,
  PROVISIONING_SCOPES,
  rowsOf,
  type Service,
  waitForOrder,
} from '../support/provisioning-factory';
import { createSubscriber, listen, listEvents } from '../support/subscriber-factory';
import { createTenantWithToken, startTestApp, type TenantWithToken, type TestApp } from '../support/test-app';
import { letTimePass, waitUntil } from '../support/wait-for';
import { startFakeNas, type FakeNas } from '../radius/support/fake-nas';

const PAYMENT_PAGE = 'https://pay.acme-fiber.example/suspended?from=radius';

interface NetworkSettings {
  suspension_mode: 'reject' | 'walled_garden';
  payment_page_url: string | null;
  walled_garden_address_list: string;
  walled_garden_filter_id: string;
  applied: boolean;
  applied_at: string | null;
  updated_at: string | null;
}

interface GroupRows {
  check: { attribute: string; op: string; value: string }[];
  reply: { attribute: string; op: string; value: string }[];
}

const REJECT_ROWS: GroupRows = {
  check: [{ attribute: 'Auth-Type', op: ':=', value: 'Reject' }],
  reply: [{ attribute: 'Reply-Message', op: ':=', value: 'Service suspended' }],
};

const walledRows = (
  addressList = 'suspended',
  filterId = 'walled-garden',
  url = PAYMENT_PAGE,
): GroupRows => ({
  check: [],
  reply: [
    { attribute: 'Filter-Id', op: ':=', value: filterId },
    { attribute: 'Mikrotik-Address-List', op: ':=', value: addressList },
    { attribute: 'WISPr-Redirection-URL', op: ':=', value: url },
  ],
});

/** Issue #33 item 4: the tenant's suspension mode, the walled garden, and moving already-suspended services. */
describe('Network: suspension mode and walled garden', () => {
  let t: TestApp;
  const fakes: FakeNas[] = [];

  beforeAll(async () => {
    t = await startTestApp({ ...FAST_WORKER, ...FAST_COA });
    await listen(t);
  });

  afterAll(async () => {
    await Promise.all(fakes.map((fake) => fake.close()));
    await t?.close();
  });

  const getSettings = (tenant: TenantWithToken) =>
    request(t.http).get('/api/v1/network-settings').set(bearer(tenant.token));
  const patchSettings = (tenant: TenantWithToken, body: unknown) =>
    request(t.http)
      .patch('/api/v1/network-settings')
      .set(bearer(tenant.token))
      .send(body as object);

  /** PATCHes (200) and waits until the worker has carried the change to the network. */
  async function applySettings(
    tenant: TenantWithToken,
    body: Record<string, unknown>,
  ): Promise<NetworkSettings> {
    const res = await patchSettings(tenant, body);
    expectSuccess(res);
    return waitUntil(
      async () => (await getSettings(tenant)).body.data as NetworkSettings,
      (settings) => settings.applied,
      { what: 'the network settings applied' },
    );
  }

  async function groupRows(group: string): Promise<GroupRows> {
    const read = (table: string) =>
      t.dataSource.query<GroupRows['check']>(
        `SELECT attribute, op, value FROM ${table} WHERE groupname = $1 ORDER BY attribute`,
        [group],
      );
    return { check: await read('radgroupcheck'), reply: await read('radgroupreply') };
  }

  /** A tenant with a plan, a fake NAS registered at a loopback address, and an active subscriber. */
  async function newIsp() {
    const tenant = await createTenantWithToken(t, PROVISIONING_SCOPES);
    const subscriberId = (await createSubscriber(t, tenant.token, { status: 'active' })).id;
    const plan = await createPlan(t, tenant.token);
    const secret = uniqueSecret('wg');
    const fake = await startFakeNas({ address: randomLoopback(), secret });
    fakes.push(fake);
    const res = await postNas(
      t,
      tenant.token,
      nasBody({ ip: fake.address, secret, coa_port: fake.port, type: 'mikrotik' }),
    );
    expectSuccess(res, 201);
    return { tenant, subscriberId, plan, fake, nas: res.body.data as Nas };
  }

  type Isp = Awaited<ReturnType<typeof newIsp>>;

  async function act(isp: Isp, serviceId: string, body: Record<string, unknown>): Promise<NetworkOrder> {
    const res = await postAction(t, isp.tenant.token, serviceId, body);
    expectSuccess(res, 202);
    const order = (await waitForOrder(t, isp.tenant.token, res.body.data.id as string, [
      'completed',
      'failed',
    ])) as NetworkOrder;
    expect(order.status).toBe('completed');
    return order;
  }

  async function activeService(isp: Isp): Promise<Service> {
    const { service, order } = await createService(t, isp.tenant.token, isp.subscriberId, {
      plan_id: isp.plan.id,
    });
    expect((await waitForOrder(t, isp.tenant.token, order.id, ['completed', 'failed'])).status).toBe(
      'completed',
    );
    return getService(t, isp.tenant.token, service.id);
  }

  /** An open radacct session (no Stop) of the username on the ISP's NAS. */
  async function online(isp: Isp, service: Service): Promise<string> {
    const acctSessionId = uniqueAcctSessionId();
    await insertRadacct(t, {
      acctsessionid: acctSessionId,
      username: service.radius_username,
      nasipaddress: isp.nas.ip,
      acctstarttime: new Date(),
    });
    return acctSessionId;
  }

  describe('GET and PATCH /network-settings', () => {
    it('should answer the defaults before any change: reject, no payment page, address list suspended, Filter-Id walled-garden', async () => {
      const tenant = await createTenantWithToken(t, PROVISIONING_SCOPES);
      const res = await getSettings(tenant);
      expectSuccess(res);
      expect(res.body.data).toEqual({
        suspension_mode: 'reject',
        payment_page_url: null,
        walled_garden_address_list: 'suspended',
        walled_garden_filter_id: 'walled-garden',
        applied: true,
        applied_at: null,
        updated_at: null,
      } satisfies NetworkSettings);
    });

    it('should refuse each bad value with 422 naming the field, and change nothing', async () => {
      const tenant = await createTenantWithToken(t, PROVISIONING_SCOPES);
      const cases: [Record<string, unknown>, string][] = [
        [{ suspension_mode: 'walled_garden' }, 'payment_page_url'],
        [{ suspension_mode: 'walled_garden', payment_page_url: null }, 'payment_page_url'],
        [{ suspension_mode: 'captive' }, 'suspension_mode'],
        [{ suspension_mode: null }, 'suspension_mode'],
        [{ payment_page_url: 'http://pay.example/x' }, 'payment_page_url'],
        [{ payment_page_url: 'https://user:pw@pay.example/x' }, 'payment_page_url'],
        [{ payment_page_url: 'javascript:alert(1)' }, 'payment_page_url'],
        [{ payment_page_url: `https://pay.example/${'a'.repeat(2000)}` }, 'payment_page_url'],
        [{ payment_page_url: 42 }, 'payment_page_url'],
        [{ walled_garden_address_list: 'has space' }, 'walled_garden_address_list'],
        [{ walled_garden_address_list: '' }, 'walled_garden_address_list'],
        [{ walled_garden_filter_id: 'x'.repeat(65) }, 'walled_garden_filter_id'],
        [{ walled_garden_filter_id: 'quote"d' }, 'walled_garden_filter_id'],
      ];
      for (const [body, field] of cases) {
        const res = await patchSettings(tenant, body);
        expectError(res, 422, 'validation_failed', field);
      }
      expect((await getSettings(tenant)).body.data).toMatchObject({
        suspension_mode: 'reject',
        updated_at: null,
      });
      expect(await listEvents(t, tenant.token, { type: 'network_settings.updated' })).toEqual([]);
    });

    it('should keep a walled garden from losing its payment page (clearing it answers 422)', async () => {
      const tenant = await createTenantWithToken(t, PROVISIONING_SCOPES);
      await applySettings(tenant, { suspension_mode: 'walled_garden', payment_page_url: PAYMENT_PAGE });
      expectError(
        await patchSettings(tenant, { payment_page_url: null }),
        422,
        'validation_failed',
        'payment_page_url',
      );
      const cleared = await applySettings(tenant, { suspension_mode: 'reject', payment_page_url: null });
      expect(cleared).toMatchObject({ suspension_mode: 'reject', payment_page_url: null });
    });

    it('should merge the fields sent, emit network_settings.updated naming them, and answer an unchanged PATCH without an event', async () => {
      const tenant = await createTenantWithToken(t, PROVISIONING_SCOPES);
      const res = await patchSettings(tenant, {
        suspension_mode: 'walled_garden',
        payment_page_url: PAYMENT_PAGE,
        walled_garden_filter_id: 'unpaid.redirect',
      });
      expectSuccess(res);
      expect(res.body.data).toMatchObject({
        suspension_mode: 'walled_garden',
        payment_page_url: PAYMENT_PAGE,
        walled_garden_address_list: 'suspended',
        walled_garden_filter_id: 'unpaid.redirect',
      });
      expect(res.body.data.updated_at).not.toBeNull();
      const [event] = await listEvents(t, tenant.token, { type: 'network_settings.updated' });
      expect(event.data.changed_fields).toEqual([
        'suspension_mode',
        'payment_page_url',
        'walled_garden_filter_id',
      ]);
      expect(event.data.object).toMatchObject({ suspension_mode: 'walled_garden' });

      const applied = await waitUntil(
        async () => (await getSettings(tenant)).body.data as NetworkSettings,
        (settings) => settings.applied,
      );
      expect(applied.applied_at).not.toBeNull();
      const again = await patchSettings(tenant, {
        suspension_mode: 'walled_garden',
        walled_garden_filter_id: 'unpaid.redirect',
      });
      expectSuccess(again);
      expect(again.body.data).toEqual(applied);
      expect(await listEvents(t, tenant.token, { type: 'network_settings.updated' })).toHaveLength(1);
    });

    it('should let provisioning:read read but not change them (403), and keep tenants apart', async () => {
      const writer = await createTenantWithToken(t, PROVISIONING_SCOPES);
      const reader = await createTenantWithToken(t, ['provisioning:read']);
      expectSuccess(await getSettings(reader));
      expectError(await patchSettings(reader, { suspension_mode: 'reject' }), 403, 'insufficient_scope');
      await applySettings(writer, { suspension_mode: 'walled_garden', payment_page_url: PAYMENT_PAGE });
      expect((await getSettings(reader)).body.data.suspension_mode).toBe('reject');
      const none = await createTenantWithToken(t, ['subscribers:read']);
      expectError(await getSettings(none), 403, 'insufficient_scope');
    });
  });

  describe('what a suspended service gets, and moving the suspended ones', () => {
    it("should reject in the tenant's suspended group by default, and accept into the walled garden once the mode is switched, disconnecting the suspended sessions online", async () => {
      const isp = await newIsp();
      const group = `suspended:${isp.tenant.slug}`;
      const suspended = await activeService(isp);
      const active = await activeService(isp);
      const sessionId = await online(isp, suspended);
      await online(isp, active);

      const suspend = await act(isp, suspended.id, { action: 'suspend', reason: 'non_payment' });
      expect(suspend.disconnect).toBe('acked');
      expect(await rowsOf(t, suspended.radius_username)).toEqual(
        expectedRows('suspended', DEFAULT_PPPOE_PASSWORD, isp.plan, null, suspended.radius_username),
      );
      expect(await groupRows(group)).toEqual(REJECT_ROWS);
      isp.fake.clear();

      const userRows = await rowsOf(t, suspended.radius_username);
      const settings = await applySettings(isp.tenant, {
        suspension_mode: 'walled_garden',
        payment_page_url: PAYMENT_PAGE,
      });
      expect(settings).toMatchObject({ suspension_mode: 'walled_garden', applied: true });
      expect(await groupRows(group)).toEqual(walledRows());
      // The usernames stay as they are: the group's rows are what moved.
      expect(await rowsOf(t, suspended.radius_username)).toEqual(userRows);
      // The suspended session online was told to go (it is still open in radacct: no Stop was sent), the active one not.
      await isp.fake.waitFor(1, 5_000);
      expect(isp.fake.received.map((sent) => [sent.code, sent.attributes['Acct-Session-Id']])).toEqual([
        ['Disconnect-Request', sessionId],
      ]);
      expect(isp.fake.received[0].authenticatorValid).toBe(true);

      isp.fake.clear();
      await applySettings(isp.tenant, {
        walled_garden_address_list: 'unpaid',
        walled_garden_filter_id: 'redirect',
      });
      expect(await groupRows(group)).toEqual(walledRows('unpaid', 'redirect'));
      await isp.fake.waitFor(1, 5_000);

      isp.fake.clear();
      await applySettings(isp.tenant, { suspension_mode: 'reject' });
      expect(await groupRows(group)).toEqual(REJECT_ROWS);
      await isp.fake.waitFor(1, 5_000);
      expect(isp.fake.received[0].code).toBe('Disconnect-Request');

      // Resumed, the service leaves the group and gets its rate back.
      await act(isp, suspended.id, { action: 'resume' });
      expect((await rowsOf(t, suspended.radius_username)).groups).toEqual([]);
    });

    it('should put a service suspended in walled-garden mode straight into the walled garden (its group made from the settings)', async () => {
      const isp = await newIsp();
      await applySettings(isp.tenant, {
        suspension_mode: 'walled_garden',
        payment_page_url: PAYMENT_PAGE,
        walled_garden_address_list: 'debtors',
      });
      const service = await activeService(isp);
      await act(isp, service.id, { action: 'suspend', reason: 'non_payment' });
      expect((await rowsOf(t, service.radius_username)).groups).toEqual([
        { groupname: `suspended:${isp.tenant.slug}`, priority: 0 },
      ]);
      expect(await groupRows(`suspended:${isp.tenant.slug}`)).toEqual(walledRows('debtors'));
    });

    it("should leave another tenant's suspended group and sessions alone", async () => {
      const mine = await newIsp();
      const theirs = await newIsp();
      const service = await activeService(theirs);
      await act(theirs, service.id, { action: 'suspend' });
      await online(theirs, service);
      theirs.fake.clear();

      await applySettings(mine.tenant, { suspension_mode: 'walled_garden', payment_page_url: PAYMENT_PAGE });
      expect(await groupRows(`suspended:${theirs.tenant.slug}`)).toEqual(REJECT_ROWS);
      // A witness: the change of `mine` was applied (above); nothing reached the other tenant's NAS meanwhile.
      await letTimePass(200);
      expect(theirs.fake.received).toEqual([]);
    });

    it("should move the tenant's usernames still in the shared legacy group `suspended` into its own group on a change", async () => {
      const isp = await newIsp();
      const legacy = `${isp.tenant.slug}/legacy-${uniqueAcctSessionId().toLowerCase()}`;
      const other = `other-${uniqueAcctSessionId().toLowerCase()}/someone`;
      for (const username of [legacy, other]) {
        await t.dataSource.query(
          `INSERT INTO radusergroup (username, groupname, priority) VALUES ($1, 'suspended', 0)`,
          [username],
        );
      }
      await applySettings(isp.tenant, { suspension_mode: 'walled_garden', payment_page_url: PAYMENT_PAGE });
      const groups = await t.dataSource.query<{ username: string; groupname: string }[]>(
        `SELECT username, groupname FROM radusergroup WHERE username = ANY($1) ORDER BY username`,
        [[legacy, other]],
      );
      expect(groups).toEqual(
        [
          { username: legacy, groupname: `suspended:${isp.tenant.slug}` },
          { username: other, groupname: 'suspended' },
        ].sort((a, b) => (a.username < b.username ? -1 : 1)),
      );
      await t.dataSource.query(`DELETE FROM radusergroup WHERE username = ANY($1)`, [[legacy, other]]);
    });
  });
});
