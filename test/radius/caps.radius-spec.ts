import { randomInt } from 'node:crypto';
import request from 'supertest';
import { bearer } from '../support/factories';
import {
  createPlan,
  type Order,
  postAction,
  type Service,
  type ServicePlan,
  waitForOrder,
} from '../support/provisioning-factory';
import { listEvents } from '../support/subscriber-factory';
import type { TenantWithToken, TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import type { FakeNas } from './support/fake-nas';
import type { RadiusReply } from './support/radius-client';
import { RadiusLab, type TenantNetwork } from './support/radius-lab';

/**
 * Issue #33 items 2 and 3 against a real FreeRADIUS 3 on the real Postgres: a plan's burst in the Access-Accept, and
 * an Interim-Update stream sent through FreeRADIUS into radacct crossing a data cap, which the API answers with a
 * CoA-Request carrying the throttle rate (or a Disconnect-Request when the plan blocks) at the fake NAS.
 */

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
  const lab = new RadiusLab();
  let t: TestApp;
  let net: TenantNetwork;
  let tenant: TenantWithToken;
  let nas: FakeNas;
  const withLog = (run: () => Promise<void>) => lab.withLog(run);
  const login = (username: string): Promise<RadiusReply> => lab.login(net, username);
  const activeService = (plan: ServicePlan): Promise<Service> => lab.activeService(net, plan.id);

  /** One accounting packet from the NAS, with the session's running totals. */
  const account = (
    username: string,
    sessionId: string,
    statusType: 'Start' | 'Interim-Update' | 'Stop',
    bytes: { in: number; out: number } = { in: 0, out: 0 },
  ): Promise<RadiusReply> =>
    lab.account(net, username, sessionId, statusType, {
      inputBytes: bytes.in,
      outputBytes: bytes.out,
      framedIp: '100.64.8.8',
    });

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
    t = await lab.startApp({ DATA_CAP_POLL_MS: '50' });
    net = await lab.network('caps-suite-nas-secret', 13, ['admin']);
    ({ tenant, nas } = net);
    await lab.startRadius('caps-static-client-secret');
  });

  afterAll(() => lab.stop());

  beforeEach(() => lab.resetNases());

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
