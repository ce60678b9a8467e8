import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { expectError } from '../support/envelope';
import { bearer } from '../support/factories';
import {
  FAST_COA,
  FAST_WORKER,
  insertRadacct,
  type Nas,
  nasBody,
  postNas,
  randomLoopback,
  uniqueAcctSessionId,
  uniqueSecret,
  updateRadacct,
} from '../support/network-factory';
import {
  createPlan,
  createService,
  getService,
  planBody,
  postPlan,
  rowsOf,
  type Service,
  type ServicePlan,
  waitForOrder,
} from '../support/provisioning-factory';
import { createSubscriber, listEvents } from '../support/subscriber-factory';
import { advanceTestClock, createClockedTenant, startClockApp } from '../support/test-clock-factory';
import { createTenantWithToken, type TenantWithToken, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import { startFakeNas, type FakeNas } from '../radius/support/fake-nas';

/** Issue #33 items 2 and 3: data caps (warning, throttle or block, restore, top-ups) and burst rates. */

interface DataCap {
  service_id: string;
  cap_state: string;
  cap_bytes: number | null;
  cap_action: string | null;
  period_start: string;
  period_end: string;
  used_bytes: number;
  top_up_bytes: number;
  allowance_bytes: number | null;
  warned_at: string | null;
  reached_at: string | null;
}

interface NetworkOrder {
  id: string;
  action: string;
  status: string;
  coa: string | null;
  disconnect: string | null;
}

const CAPPED = {
  data_cap_bytes: 1_000_000,
  cap_action: 'throttle',
  throttle_download_kbps: 1_000,
  throttle_upload_kbps: 512,
};

const BURST = {
  burst_download_kbps: 80_000,
  burst_upload_kbps: 20_000,
  burst_threshold_download_kbps: 40_000,
  burst_threshold_upload_kbps: 8_000,
  burst_time_s: 16,
};

describe('Data caps and burst (e2e)', () => {
  let t: TestApp;
  let isp: TenantWithToken;
  const fakes: FakeNas[] = [];

  beforeAll(async () => {
    t = await startClockApp({ ...FAST_WORKER, ...FAST_COA, DATA_CAP_POLL_MS: '50' });
    isp = await createTenantWithToken(t);
  });

  afterAll(async () => {
    await Promise.all(fakes.map((fake) => fake.close()));
    await t?.close();
  });

  async function dataCap(token: string, serviceId: string): Promise<DataCap> {
    const res = await request(t.http).get(`/api/v1/services/${serviceId}/data-cap`).set(bearer(token));
    expect(res.status).toBe(200);
    return res.body.data as DataCap;
  }

  async function activeService(token: string, plan: ServicePlan): Promise<Service> {
    const subscriber = await createSubscriber(t, token, { status: 'active' });
    const { service, order } = await createService(t, token, subscriber.id, { plan_id: plan.id });
    expect((await waitForOrder(t, token, order.id, ['completed', 'failed'])).status).toBe('completed');
    return getService(t, token, service.id);
  }

  async function fakeNas(token: string): Promise<{ fake: FakeNas; nas: Nas }> {
    const secret = uniqueSecret('cap');
    const fake = await startFakeNas({ address: randomLoopback(), secret });
    fakes.push(fake);
    const res = await postNas(t, token, nasBody({ ip: fake.address, secret, coa_port: fake.port }));
    expect(res.status).toBe(201);
    return { fake, nas: res.body.data as Nas };
  }

  /** An open session of the service on the NAS, started at `at` (what FreeRADIUS writes on a Start). */
  async function startSession(service: Service, nasIp: string, at: Date = new Date()) {
    const start = new Date(Math.max(at.getTime(), new Date(service.created_at).getTime() + 1000));
    const radacctId = await insertRadacct(t, {
      acctsessionid: uniqueAcctSessionId(),
      username: service.radius_username,
      nasipaddress: nasIp,
      acctstarttime: start,
      acctupdatetime: start,
      framedipaddress: '100.64.9.9',
      acctinputoctets: 0,
      acctoutputoctets: 0,
    });
    return { radacctId, start };
  }

  /** An Interim-Update as FreeRADIUS writes it: the session's running totals. */
  function interim(radacctId: string, at: Date, bytesIn: number, bytesOut: number) {
    return updateRadacct(t, radacctId, {
      acctupdatetime: at,
      acctinputoctets: bytesIn,
      acctoutputoctets: bytesOut,
    });
  }

  async function eventsOf(token: string, type: string, serviceId: string) {
    return (await listEvents(t, token, { type })).filter((event) => event.subject_id === serviceId);
  }

  async function capOrder(token: string, serviceId: string, action: string): Promise<NetworkOrder> {
    const order = await waitFor(
      async () => {
        const res = await request(t.http)
          .get('/api/v1/provisioning-orders')
          .query({ service_id: serviceId, action, limit: '10' })
          .set(bearer(token));
        return (res.body.data as NetworkOrder[] | undefined)?.[0];
      },
      { what: `${action} order of ${serviceId}` },
    );
    return waitForOrder(t, token, order.id, ['completed', 'failed']);
  }

  describe('plans', () => {
    it.each([
      [{ ...CAPPED, cap_action: undefined }, 'cap_action'],
      [{ data_cap_bytes: undefined, cap_action: 'block' }, 'data_cap_bytes'],
      [{ ...CAPPED, throttle_upload_kbps: undefined }, 'throttle_upload_kbps'],
      [{ ...CAPPED, cap_action: 'block' }, 'throttle_download_kbps'],
      [{ ...CAPPED, throttle_download_kbps: 50_000 }, 'throttle_download_kbps'],
      [{ ...CAPPED, data_cap_bytes: 0 }, 'data_cap_bytes'],
      [{ ...CAPPED, cap_action: 'slow' }, 'cap_action'],
      [{ ...BURST, burst_download_kbps: 50_000 }, 'burst_download_kbps'],
      [{ ...BURST, burst_upload_kbps: 9_000 }, 'burst_upload_kbps'],
      [{ ...BURST, burst_threshold_download_kbps: 50_001 }, 'burst_threshold_download_kbps'],
      [{ ...BURST, burst_threshold_upload_kbps: 10_001 }, 'burst_threshold_upload_kbps'],
      [{ ...BURST, burst_time_s: undefined }, 'burst_time_s'],
      [{ ...BURST, burst_time_s: 0 }, 'burst_time_s'],
    ])('should refuse %j naming %s (422 validation_failed)', async (fields, field) => {
      const res = await postPlan(t, isp.token, planBody(fields));
      expectError(res, 422, 'validation_failed', field);
    });

    it('should answer the cap and burst fields, and freeze them while a live service uses the plan', async () => {
      const plan = await createPlan(t, isp.token, { ...CAPPED, ...BURST });
      expect(plan).toMatchObject({ ...CAPPED, ...BURST, download_kbps: 50_000, upload_kbps: 10_000 });
      const plain = await createPlan(t, isp.token);
      expect(plain).toMatchObject({ data_cap_bytes: null, cap_action: null, burst_time_s: null });
      // Unused, a plan's cap may change; a PATCH checks the fields together.
      const patched = await request(t.http)
        .patch(`/api/v1/service-plans/${plain.id}`)
        .set(bearer(isp.token))
        .send({ data_cap_bytes: 5_000, cap_action: 'block' });
      expect(patched.status).toBe(200);
      expect(patched.body.data).toMatchObject({ data_cap_bytes: 5_000, cap_action: 'block' });
      expectError(
        await request(t.http)
          .patch(`/api/v1/service-plans/${plain.id}`)
          .set(bearer(isp.token))
          .send({ download_kbps: 100, burst_download_kbps: 90 }),
        422,
        'validation_failed',
        'burst_upload_kbps',
      );
      await activeService(isp.token, plan);
      expectError(
        await request(t.http)
          .patch(`/api/v1/service-plans/${plan.id}`)
          .set(bearer(isp.token))
          .send({ data_cap_bytes: 2_000_000 }),
        409,
        'plan_in_use',
        'data_cap_bytes',
      );
    });

    it("should write the burst in Mikrotik-Rate-Limit (rx/tx = the client's upload/download) and WISPr rates", async () => {
      const plan = await createPlan(t, isp.token, BURST);
      const service = await activeService(isp.token, plan);
      const rows = await rowsOf(t, service.radius_username);
      expect(rows.reply).toEqual(
        expect.arrayContaining([
          {
            attribute: 'Mikrotik-Rate-Limit',
            op: ':=',
            value: '10000k/50000k 20000k/80000k 8000k/40000k 16/16',
          },
          { attribute: 'WISPr-Bandwidth-Max-Down', op: ':=', value: '50000000' },
          { attribute: 'WISPr-Bandwidth-Max-Up', op: ':=', value: '10000000' },
        ]),
      );
    });
  });

  describe('usage, throttle, top-up and block', () => {
    it('should count an Interim-Update sent twice once', async () => {
      const plan = await createPlan(t, isp.token, CAPPED);
      const service = await activeService(isp.token, plan);
      const { radacctId, start } = await startSession(service, randomLoopback());
      const at = new Date(start.getTime() + 60_000);
      await interim(radacctId, at, 100_000, 200_000);
      // The same packet again (a retransmission FreeRADIUS did not spot as a duplicate): the totals do not move.
      await interim(radacctId, at, 100_000, 200_000);
      const cap = await dataCap(isp.token, service.id);
      expect(cap).toMatchObject({
        service_id: service.id,
        cap_state: 'normal',
        cap_bytes: 1_000_000,
        cap_action: 'throttle',
        used_bytes: 300_000,
        top_up_bytes: 0,
        allowance_bytes: 1_000_000,
        warned_at: null,
        reached_at: null,
      });
      expect(cap.period_start).toBe(`${new Date().toISOString().slice(0, 8)}01`);
    });

    it('should keep counting a closed session once radacct no longer holds it (the retention prunes radacct)', async () => {
      const plan = await createPlan(t, isp.token, CAPPED);
      const service = await activeService(isp.token, plan);
      const { radacctId, start } = await startSession(service, randomLoopback());
      const at = new Date(start.getTime() + 60_000);
      await interim(radacctId, at, 100_000, 200_000);
      // What AccountingRetentionWorker does to a session that stopped long ago: radacct forgets it, the days stay.
      await t.dataSource.query(`DELETE FROM radacct WHERE radacctid = $1`, [radacctId]);
      expect(await dataCap(isp.token, service.id)).toMatchObject({ used_bytes: 300_000 });
    });

    it('should warn at 80 %, throttle at the cap with a CoA-Request, and restore after a charged top-up', async () => {
      const plan = await createPlan(t, isp.token, { ...CAPPED, ...BURST });
      const { fake, nas } = await fakeNas(isp.token);
      const service = await activeService(isp.token, plan);
      const { radacctId, start } = await startSession(service, nas.ip);
      await interim(radacctId, new Date(start.getTime() + 60_000), 300_000, 550_000);
      await waitFor(async () => (await dataCap(isp.token, service.id)).warned_at, { what: 'the warning' });
      expect(await eventsOf(isp.token, 'service.cap_warning', service.id)).toHaveLength(1);
      expect(fake.received).toHaveLength(0);

      await interim(radacctId, new Date(start.getTime() + 120_000), 400_000, 650_000);
      const throttle = await capOrder(isp.token, service.id, 'cap_throttle');
      expect(throttle).toMatchObject({ status: 'completed', coa: 'acked', disconnect: null });
      const [coa] = await fake.waitFor(1);
      expect(coa).toMatchObject({ code: 'CoA-Request', authenticatorValid: true });
      expect(coa.attributes).toMatchObject({
        'User-Name': service.radius_username,
        'Mikrotik-Rate-Limit': '512k/1000k',
        'WISPr-Bandwidth-Max-Down': 1_000_000,
        'WISPr-Bandwidth-Max-Up': 512_000,
      });
      expect((await getService(t, isp.token, service.id)).cap_state).toBe('throttled');
      // A reconnect stays throttled: the reply rows hold the throttle rate.
      expect((await rowsOf(t, service.radius_username)).reply).toEqual(
        expect.arrayContaining([{ attribute: 'Mikrotik-Rate-Limit', op: ':=', value: '512k/1000k' }]),
      );
      const reached = await eventsOf(isp.token, 'service.cap_reached', service.id);
      expect(reached).toHaveLength(1);
      expect(reached[0].data).toMatchObject({
        order_id: throttle.id,
        object: { used_bytes: 1_050_000, allowance_bytes: 1_000_000 },
      });
      // More traffic while throttled: no second order, no second event, no second warning.
      await interim(radacctId, new Date(start.getTime() + 180_000), 500_000, 700_000);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(await eventsOf(isp.token, 'service.cap_reached', service.id)).toHaveLength(1);
      expect(await eventsOf(isp.token, 'service.cap_warning', service.id)).toHaveLength(1);

      fake.clear();
      const key = `top-up-${randomBytes(6).toString('hex')}`;
      const topUp = () =>
        request(t.http)
          .post(`/api/v1/services/${service.id}/top-ups`)
          .set(bearer(isp.token))
          .set('Idempotency-Key', key)
          .send({ bytes: 1_000_000, price: 500, description: 'Data top-up 1 MB' });
      const first = await topUp();
      expect(first.status).toBe(201);
      expect(first.body.data).toMatchObject({
        service_id: service.id,
        bytes: 1_000_000,
        price: 500,
        currency: 'USD',
        description: 'Data top-up 1 MB',
      });
      const again = await topUp();
      expect(again.status).toBe(201);
      expect(again.body.data).toEqual(first.body.data);
      const charges = await request(t.http)
        .get(`/api/v1/subscribers/${service.subscriber_id}/charges`)
        .set(bearer(isp.token));
      expect(charges.body.data).toEqual([
        expect.objectContaining({
          id: first.body.data.charge_id,
          service_id: service.id,
          amount: 500,
          currency: 'USD',
          source: 'top_up',
          source_id: first.body.data.id,
          status: 'pending',
        }),
      ]);

      const restore = await capOrder(isp.token, service.id, 'cap_restore');
      expect(restore).toMatchObject({ status: 'completed', coa: 'acked' });
      const [back] = await fake.waitFor(1);
      expect(back.attributes).toMatchObject({
        'Mikrotik-Rate-Limit': '10000k/50000k 20000k/80000k 8000k/40000k 16/16',
        'WISPr-Bandwidth-Max-Down': 50_000_000,
      });
      expect(await dataCap(isp.token, service.id)).toMatchObject({
        cap_state: 'normal',
        used_bytes: 1_200_000,
        top_up_bytes: 1_000_000,
        allowance_bytes: 2_000_000,
        reached_at: null,
      });
      expect(await eventsOf(isp.token, 'service.cap_restored', service.id)).toHaveLength(1);
      expect(await eventsOf(isp.token, 'service.cap_topped_up', service.id)).toHaveLength(1);
    });

    it('should disconnect and reject a service whose plan blocks at the cap', async () => {
      const plan = await createPlan(t, isp.token, { data_cap_bytes: 1_000, cap_action: 'block' });
      const { fake, nas } = await fakeNas(isp.token);
      const service = await activeService(isp.token, plan);
      const { radacctId, start } = await startSession(service, nas.ip);
      await interim(radacctId, new Date(start.getTime() + 60_000), 600, 600);
      const block = await capOrder(isp.token, service.id, 'cap_block');
      expect(block).toMatchObject({ status: 'completed', disconnect: 'acked', coa: null });
      const [sent] = await fake.waitFor(1);
      expect(sent).toMatchObject({ code: 'Disconnect-Request', authenticatorValid: true });
      const rows = await rowsOf(t, service.radius_username);
      expect(rows.check).toEqual(
        expect.arrayContaining([{ attribute: 'Auth-Type', op: ':=', value: 'Reject' }]),
      );
      expect(rows.reply).toEqual([{ attribute: 'Reply-Message', op: ':=', value: 'Data cap reached' }]);
      expect((await getService(t, isp.token, service.id)).cap_state).toBe('blocked');
    });

    it('should refuse a top-up of a plan without a cap (409 no_data_cap) and bad bodies (422)', async () => {
      const service = await activeService(isp.token, await createPlan(t, isp.token));
      const post = (body: object) =>
        request(t.http).post(`/api/v1/services/${service.id}/top-ups`).set(bearer(isp.token)).send(body);
      expectError(await post({ bytes: 1000, price: 0 }), 409, 'no_data_cap', 'service_id');
      expectError(await post({ bytes: 0, price: 0 }), 422, 'validation_failed', 'bytes');
      expectError(await post({ bytes: 1000, price: -1 }), 422, 'validation_failed', 'price');
      expectError(
        await request(t.http)
          .post('/api/v1/services/svc_01JD3Z6W3R4T5Y6U7I8O9P0QAB/top-ups')
          .set(bearer(isp.token))
          .send({ bytes: 1000, price: 0 }),
        404,
        'not_found',
      );
    });
  });

  it("should restore a throttled service when its tenant's test clock crosses the period start", async () => {
    const clocked = await createClockedTenant(t, '2031-01-10T10:00:00Z');
    const plan = await createPlan(t, clocked.token, CAPPED);
    const service = await activeService(clocked.token, plan);
    const { fake, nas } = await fakeNas(clocked.token);
    // The session's packets carry the test tenant's days (a NAS and FreeRADIUS keep their own time).
    const start = new Date('2031-01-10T10:05:00Z');
    const { radacctId } = await startSession(service, nas.ip, start);
    await interim(radacctId, new Date('2031-01-10T11:00:00Z'), 500_000, 600_000);
    expect(await capOrder(clocked.token, service.id, 'cap_throttle')).toMatchObject({ status: 'completed' });
    expect(await dataCap(clocked.token, service.id)).toMatchObject({
      cap_state: 'throttled',
      period_start: '2031-01-01',
      period_end: '2031-02-01',
      used_bytes: 1_100_000,
    });
    fake.clear();
    await advanceTestClock(t, clocked.owner.token, clocked.clock.id, '2031-02-01T06:00:00.000Z');
    expect(await capOrder(clocked.token, service.id, 'cap_restore')).toMatchObject({
      status: 'completed',
      coa: 'acked',
    });
    const [coa] = await fake.waitFor(1);
    expect(coa.attributes).toMatchObject({ 'Mikrotik-Rate-Limit': '10000k/50000k' });
    expect(await dataCap(clocked.token, service.id)).toMatchObject({
      cap_state: 'normal',
      period_start: '2031-02-01',
      used_bytes: 0,
    });
  });
});
