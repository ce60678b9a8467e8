import { randomInt } from 'node:crypto';
import request from 'supertest';
import { bearer } from '../support/factories';
import {
  createPlan,
  createService,
  DEFAULT_PPPOE_PASSWORD,
  type Order,
  postAction,
  type Service,
  type ServicePlan,
  waitForOrder,
} from '../support/provisioning-factory';
import { createSubscriber, listEvents } from '../support/subscriber-factory';
import { createTenantWithToken, startTestApp, type TenantWithToken, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import { startFakeNas, type FakeNas } from './support/fake-nas';
import { freeRadiusBinary, startFreeRadius, type FreeRadius } from './support/freeradius';
import { accessRequest, accountingRequest, type RadiusReply } from './support/radius-client';

/**
 * Issue #33 items 2 and 3 against a real FreeRADIUS 3 on the real Postgres: a plan's burst in the Access-Accept, and
 * an Interim-Update stream sent through FreeRADIUS into radacct crossing a data cap, which the API answers with a
 * CoA-Request carrying the throttle rate (or a Disconnect-Request when the plan blocks) at the fake NAS.
 */

const DATABASE_URL = process.env.DATABASE_URL ?? '';
const SECRET = 'caps-suite-nas-secret';

const BURST = {
  download_kbps: 50_000,
  upload_kbps: 10_000,
  burst_download_kbps: 80_000,
  burst_upload_kbps: 20_000,
  burst_threshold_download_kbps: 40_000,
  burst_threshold_upload_kbps: 8_000,
  burst_time_s: 16,
};
const BURST_RATE = '10000k/50000k 20000k/80000k 8000k/40000k 16/16';

describe('Data caps and burst with a real FreeRADIUS (RADIUS suite)', () => {
  let t: TestApp;
  let radius: FreeRadius;
  let tenant: TenantWithToken;
  let nas: FakeNas;
  const auth = () => ({ address: '127.0.0.1', port: radius.authPort });
  const acct = () => ({ address: '127.0.0.1', port: radius.acctPort });

  function login(username: string): Promise<RadiusReply> {
    return accessRequest({
      server: auth(),
      secret: SECRET,
      source: nas.address,
      userName: username,
      password: DEFAULT_PPPOE_PASSWORD,
      attributes: [['NAS-IP-Address', nas.address]],
    });
  }

  /** One accounting packet from the NAS, with the session's running totals. */
  function account(
    username: string,
    sessionId: string,
    statusType: 'Start' | 'Interim-Update' | 'Stop',
    bytes: { in: number; out: number } = { in: 0, out: 0 },
  ): Promise<RadiusReply> {
    return accountingRequest({
      server: acct(),
      secret: SECRET,
      source: nas.address,
      statusType,
      attributes: [
        ['User-Name', username],
        ['Acct-Session-Id', sessionId],
        ['NAS-IP-Address', nas.address],
        ['Framed-IP-Address', '100.64.8.8'],
      ],
      inputBytes: bytes.in,
      outputBytes: bytes.out,
    });
  }

  async function activeService(plan: ServicePlan): Promise<Service> {
    const subscriber = await createSubscriber(t, tenant.token, { status: 'active' });
    const { service, order } = await createService(t, tenant.token, subscriber.id, { plan_id: plan.id });
    expect((await waitForOrder(t, tenant.token, order.id, ['completed', 'failed'])).status).toBe('completed');
    return service;
  }

  async function dataCap(service: Service): Promise<Record<string, unknown>> {
    const res = await request(t.http)
      .get(`/api/v1/services/${service.id}/data-cap`)
      .set(bearer(tenant.token));
    expect(res.status).toBe(200);
    return res.body.data as Record<string, unknown>;
  }

  /** The service's order of `action` (the cap worker's), once it has ended. */
  async function capOrder(
    service: Service,
    action: string,
  ): Promise<Order & { coa: string | null; disconnect: string | null }> {
    const found = await waitFor(
      async () => {
        const res = await request(t.http)
          .get('/api/v1/provisioning-orders')
          .query({ service_id: service.id, action })
          .set(bearer(tenant.token));
        return (res.body.data as Order[] | undefined)?.[0];
      },
      { what: `the ${action} order of ${service.id}` },
    );
    return await waitForOrder(t, tenant.token, found.id, ['completed', 'failed']);
  }

  beforeAll(async () => {
    if (!DATABASE_URL || !freeRadiusBinary()) {
      throw new Error('the RADIUS suite needs DATABASE_URL (a Postgres) and FreeRADIUS 3 installed');
    }
    t = await startTestApp({
      PROVISIONING_POLL_MS: '50',
      PROVISIONING_RETRY_DELAYS_S: '0.05,0.05',
      RADIUS_COA_TIMEOUT_MS: '300',
      RADIUS_COA_RETRIES: '1',
      DATA_CAP_POLL_MS: '50',
    });
    tenant = await createTenantWithToken(t);
    nas = await startFakeNas({ address: `127.13.${randomInt(256)}.${randomInt(2, 255)}`, secret: SECRET });
    const res = await request(t.http)
      .post('/api/v1/nas')
      .set(bearer(tenant.token))
      .send({ name: 'bng-caps', ip: nas.address, secret: SECRET, type: 'mikrotik', coa_port: nas.port });
    expect(res.status).toBe(201);
    radius = await startFreeRadius({ databaseUrl: DATABASE_URL, clientSecret: 'caps-static-client-secret' });
  });

  afterAll(async () => {
    await radius?.stop();
    await nas?.close();
    await t?.close();
  });

  beforeEach(() => {
    nas.clear();
    nas.answer('ack');
  });

  async function withLog(run: () => Promise<void>): Promise<void> {
    try {
      await run();
    } catch (error) {
      (error as Error).message += `\n--- FreeRADIUS output (tail) ---\n${radius.log().slice(-4000)}`;
      throw error;
    }
  }

  it("should answer a plan's burst in Mikrotik-Rate-Limit and its rate in WISPr in the Access-Accept", () =>
    withLog(async () => {
      const service = await activeService(await createPlan(t, tenant.token, BURST));
      const accept = await login(service.radius_username);
      expect(accept.code).toBe('Access-Accept');
      expect(accept.attributes).toMatchObject({
        'Mikrotik-Rate-Limit': BURST_RATE,
        'WISPr-Bandwidth-Max-Down': 50_000_000,
        'WISPr-Bandwidth-Max-Up': 10_000_000,
      });
    }));

  it('should throttle with a CoA-Request once Interim-Updates through FreeRADIUS cross the cap, counting a repeat once', () =>
    withLog(async () => {
      const plan = await createPlan(t, tenant.token, {
        ...BURST,
        data_cap_bytes: 1_000_000,
        cap_action: 'throttle',
        throttle_download_kbps: 1_000,
        throttle_upload_kbps: 512,
      });
      const service = await activeService(plan);
      const sessionId = `cap-${randomInt(1e9)}`;
      expect((await account(service.radius_username, sessionId, 'Start')).code).toBe('Accounting-Response');
      await account(service.radius_username, sessionId, 'Interim-Update', { in: 200_000, out: 300_000 });
      // The same Interim-Update again (the NAS retransmitting): radacct's totals, and so the usage, do not move.
      await account(service.radius_username, sessionId, 'Interim-Update', { in: 200_000, out: 300_000 });
      expect(await dataCap(service)).toMatchObject({ used_bytes: 500_000, cap_state: 'normal' });
      await account(service.radius_username, sessionId, 'Interim-Update', { in: 300_000, out: 550_000 });
      await waitFor(async () => (await dataCap(service)).warned_at, { what: 'the 80 % warning' });
      expect(nas.received).toEqual([]);

      await account(service.radius_username, sessionId, 'Interim-Update', { in: 400_000, out: 650_000 });
      const order = await capOrder(service, 'cap_throttle');
      expect(order).toMatchObject({ status: 'completed', coa: 'acked' });
      const [coa] = await nas.waitFor(1);
      expect(coa).toMatchObject({ code: 'CoA-Request', authenticatorValid: true });
      expect(coa.attributes).toMatchObject({
        'User-Name': service.radius_username,
        'Acct-Session-Id': sessionId,
        'NAS-IP-Address': nas.address,
        'Mikrotik-Rate-Limit': '512k/1000k',
        'WISPr-Bandwidth-Max-Down': 1_000_000,
        'WISPr-Bandwidth-Max-Up': 512_000,
      });
      expect(await dataCap(service)).toMatchObject({ used_bytes: 1_050_000, cap_state: 'throttled' });
      const reached = await listEvents(t, tenant.token, {
        type: 'service.cap_reached',
        subject_id: service.id,
      });
      expect(reached).toHaveLength(1);

      // A reconnect stays throttled.
      const again = await login(service.radius_username);
      expect(again.code).toBe('Access-Accept');
      expect(again.attributes['Mikrotik-Rate-Limit']).toBe('512k/1000k');
      expect(again.attributes['WISPr-Bandwidth-Max-Down']).toBe(1_000_000);

      // A top-up lifts it: the plan's rate (burst included) comes back by CoA and at the next login.
      nas.clear();
      const topUp = await request(t.http)
        .post(`/api/v1/services/${service.id}/top-ups`)
        .set(bearer(tenant.token))
        .send({ bytes: 5_000_000, price: 300 });
      expect(topUp.status).toBe(201);
      expect(await capOrder(service, 'cap_restore')).toMatchObject({ status: 'completed', coa: 'acked' });
      const [restore] = await nas.waitFor(1);
      expect(restore.attributes['Mikrotik-Rate-Limit']).toBe(BURST_RATE);
      expect((await login(service.radius_username)).attributes['Mikrotik-Rate-Limit']).toBe(BURST_RATE);
    }));

  it('should disconnect a blocked service with a Disconnect-Request and reject its next login', () =>
    withLog(async () => {
      const plan = await createPlan(t, tenant.token, { data_cap_bytes: 10_000, cap_action: 'block' });
      const service = await activeService(plan);
      const sessionId = `block-${randomInt(1e9)}`;
      await account(service.radius_username, sessionId, 'Start');
      await account(service.radius_username, sessionId, 'Interim-Update', { in: 4_000, out: 7_000 });
      expect(await capOrder(service, 'cap_block')).toMatchObject({
        status: 'completed',
        disconnect: 'acked',
      });
      const [disconnect] = await nas.waitFor(1);
      expect(disconnect).toMatchObject({ code: 'Disconnect-Request', authenticatorValid: true });
      expect(disconnect.attributes).toMatchObject({
        'User-Name': service.radius_username,
        'Acct-Session-Id': sessionId,
      });
      const rejected = await login(service.radius_username);
      expect(rejected.code).toBe('Access-Reject');
      expect(rejected.attributes['Reply-Message']).toBe('Data cap reached');
    }));

  it('should send the burst in the CoA-Request of a change_plan', () =>
    withLog(async () => {
      const service = await activeService(await createPlan(t, tenant.token));
      const sessionId = `plan-${randomInt(1e9)}`;
      await account(service.radius_username, sessionId, 'Start');
      const burst = await createPlan(t, tenant.token, BURST);
      const res = await postAction(t, tenant.token, service.id, { action: 'change_plan', plan_id: burst.id });
      expect(res.status).toBe(202);
      const order = await waitForOrder(t, tenant.token, res.body.data.id as string, ['completed', 'failed']);
      expect(order.status).toBe('completed');
      const [coa] = await nas.waitFor(1);
      expect(coa.attributes['Mikrotik-Rate-Limit']).toBe(BURST_RATE);
    }));
});
