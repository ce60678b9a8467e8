import { randomInt } from 'node:crypto';
import request from 'supertest';
import { bearer } from '../support/factories';
import {
  createPlan,
  createService,
  DEFAULT_PPPOE_PASSWORD,
  postAction,
  PROVISIONING_SCOPES,
  type Service,
  type ServicePlan,
  waitForOrder,
} from '../support/provisioning-factory';
import { createSubscriber } from '../support/subscriber-factory';
import { createTenantWithToken, startTestApp, type TenantWithToken, type TestApp } from '../support/test-app';
import { waitUntil } from '../support/wait-for';
import { startFakeNas, type FakeNas } from './support/fake-nas';
import { freeRadiusBinary, startFreeRadius, type FreeRadius } from './support/freeradius';
import { accessRequest, accountingRequest, type RadiusReply } from './support/radius-client';

/**
 * Issue #33 item 4 against a real FreeRADIUS 3 on the real Postgres: a tenant's suspension mode. In `reject` a
 * suspended login is rejected; in `walled_garden` it is accepted with the restricted profile (Mikrotik-Address-List,
 * Filter-Id, WISPr-Redirection-URL) and nothing of its plan; switching the mode moves the services already suspended,
 * and their sessions online get a Disconnect-Request so they log in again into the new profile.
 */

const DATABASE_URL = process.env.DATABASE_URL ?? '';
const PAYMENT_PAGE = 'https://pay.example.net/suspended';
const loopback = (second: number) => `127.${second}.${randomInt(256)}.${randomInt(2, 255)}`;

interface Network {
  tenant: TenantWithToken;
  nas: FakeNas;
  secret: string;
  plan: ServicePlan;
}

describe('Walled garden with a real FreeRADIUS (RADIUS suite)', () => {
  let t: TestApp;
  let radius: FreeRadius;
  let a: Network;
  let b: Network;

  async function network(secret: string, second: number): Promise<Network> {
    const tenant = await createTenantWithToken(t, PROVISIONING_SCOPES);
    const nas = await startFakeNas({ address: loopback(second), secret });
    const res = await request(t.http)
      .post('/api/v1/nas')
      .set(bearer(tenant.token))
      .send({ name: `bng-${second}`, ip: nas.address, secret, type: 'mikrotik', coa_port: nas.port });
    expect(res.status).toBe(201);
    const plan = await createPlan(t, tenant.token, { download_kbps: 100_000, upload_kbps: 20_000 });
    return { tenant, nas, secret, plan };
  }

  async function act(net: Network, service: Service, body: Record<string, unknown>) {
    const res = await postAction(t, net.tenant.token, service.id, body);
    expect(res.status).toBe(202);
    const order = await waitForOrder(t, net.tenant.token, res.body.data.id as string, [
      'completed',
      'failed',
    ]);
    expect(order.status).toBe('completed');
    return order;
  }

  async function activeService(net: Network): Promise<Service> {
    const subscriber = await createSubscriber(t, net.tenant.token, { status: 'active' });
    const { service, order } = await createService(t, net.tenant.token, subscriber.id, {
      plan_id: net.plan.id,
    });
    expect((await waitForOrder(t, net.tenant.token, order.id, ['completed', 'failed'])).status).toBe(
      'completed',
    );
    return service;
  }

  async function suspendedService(net: Network): Promise<Service> {
    const service = await activeService(net);
    await act(net, service, { action: 'suspend', reason: 'non_payment' });
    return service;
  }

  function login(net: Network, username: string, password = DEFAULT_PPPOE_PASSWORD): Promise<RadiusReply> {
    return accessRequest({
      server: { address: '127.0.0.1', port: radius.authPort },
      secret: net.secret,
      source: net.nas.address,
      userName: username,
      password,
      attributes: [['NAS-IP-Address', net.nas.address]],
    });
  }

  function start(net: Network, username: string, sessionId: string): Promise<RadiusReply> {
    return accountingRequest({
      server: { address: '127.0.0.1', port: radius.acctPort },
      secret: net.secret,
      source: net.nas.address,
      statusType: 'Start',
      attributes: [
        ['User-Name', username],
        ['Acct-Session-Id', sessionId],
        ['NAS-IP-Address', net.nas.address],
        ['Framed-IP-Address', '100.64.9.9'],
      ],
    });
  }

  /** PATCHes the tenant's network settings and waits until the worker has carried them to the network. */
  async function settings(net: Network, body: Record<string, unknown>) {
    const res = await request(t.http)
      .patch('/api/v1/network-settings')
      .set(bearer(net.tenant.token))
      .send(body);
    expect(res.status).toBe(200);
    return waitUntil(
      async () =>
        (await request(t.http).get('/api/v1/network-settings').set(bearer(net.tenant.token))).body.data as {
          applied: boolean;
          suspension_mode: string;
        },
      (answer) => answer.applied,
      { what: 'the network settings applied' },
    );
  }

  async function withLog(run: () => Promise<void>): Promise<void> {
    try {
      await run();
    } catch (error) {
      (error as Error).message += `\n--- FreeRADIUS output (tail) ---\n${radius.log().slice(-4000)}`;
      throw error;
    }
  }

  const expectRejected = (reply: RadiusReply) => {
    expect(reply.code).toBe('Access-Reject');
    expect(reply.attributes['Reply-Message']).toBe('Service suspended');
  };

  beforeAll(async () => {
    if (!DATABASE_URL || !freeRadiusBinary()) {
      throw new Error('the RADIUS suite needs DATABASE_URL (a Postgres) and FreeRADIUS 3 installed');
    }
    t = await startTestApp({
      PROVISIONING_POLL_MS: '50',
      PROVISIONING_RETRY_DELAYS_S: '0.05,0.05',
      RADIUS_COA_TIMEOUT_MS: '300',
      RADIUS_COA_RETRIES: '1',
    });
    a = await network('walled-a-nas-secret', 21);
    b = await network('walled-b-nas-secret', 22);
    radius = await startFreeRadius({ databaseUrl: DATABASE_URL, clientSecret: 'static-client-secret' });
  });

  afterAll(async () => {
    await radius?.stop();
    await a?.nas.close();
    await b?.nas.close();
    await t?.close();
  });

  beforeEach(() => {
    for (const net of [a, b]) {
      net.nas.clear();
      net.nas.answer('ack');
    }
  });

  it('should reject a suspended login in reject mode, accept it into the walled garden once switched (disconnecting it first), and reject it again when switched back', () =>
    withLog(async () => {
      const suspended = await activeService(a);
      const active = await activeService(a);
      const sessionId = `wg-${randomInt(1e9)}`;
      expect((await start(a, suspended.radius_username, sessionId)).code).toBe('Accounting-Response');
      await act(a, suspended, { action: 'suspend', reason: 'non_payment' });
      expect((await a.nas.waitFor(1))[0].attributes['Acct-Session-Id']).toBe(sessionId);
      expectRejected(await login(a, suspended.radius_username));
      a.nas.clear();

      // The NAS did not send a Stop (as when its Disconnect-ACK is lost): the session is still open, so the mode
      // change disconnects it again.
      expect(
        (await settings(a, { suspension_mode: 'walled_garden', payment_page_url: PAYMENT_PAGE }))
          .suspension_mode,
      ).toBe('walled_garden');
      const [disconnect] = await a.nas.waitFor(1);
      expect(disconnect).toMatchObject({ code: 'Disconnect-Request', authenticatorValid: true });
      expect(disconnect.attributes).toMatchObject({
        'User-Name': suspended.radius_username,
        'Acct-Session-Id': sessionId,
      });

      const walled = await login(a, suspended.radius_username);
      expect(walled.code).toBe('Access-Accept');
      expect(walled.attributes).toMatchObject({
        'Mikrotik-Address-List': 'suspended',
        'Filter-Id': 'walled-garden',
        'WISPr-Redirection-URL': PAYMENT_PAGE,
      });
      expect(walled.attributes).not.toHaveProperty('Mikrotik-Rate-Limit');
      expect(walled.attributes).not.toHaveProperty('Reply-Message');
      // The password still decides.
      expect((await login(a, suspended.radius_username, 'wrong-password-1')).code).toBe('Access-Reject');
      // An active service of the same tenant is untouched: its rate, no walled garden.
      const accepted = await login(a, active.radius_username);
      expect(accepted.code).toBe('Access-Accept');
      expect(accepted.attributes['Mikrotik-Rate-Limit']).toBe('20000k/100000k');
      expect(accepted.attributes).not.toHaveProperty('Filter-Id');
      expect(accepted.attributes).not.toHaveProperty('Mikrotik-Address-List');

      await settings(a, { walled_garden_address_list: 'unpaid', walled_garden_filter_id: 'redirect-pay' });
      expect((await login(a, suspended.radius_username)).attributes).toMatchObject({
        'Mikrotik-Address-List': 'unpaid',
        'Filter-Id': 'redirect-pay',
      });

      await settings(a, { suspension_mode: 'reject' });
      expectRejected(await login(a, suspended.radius_username));

      // Resumed, it gets its plan again.
      await settings(a, { suspension_mode: 'walled_garden' });
      await act(a, suspended, { action: 'resume' });
      const resumed = await login(a, suspended.radius_username);
      expect(resumed.code).toBe('Access-Accept');
      expect(resumed.attributes['Mikrotik-Rate-Limit']).toBe('20000k/100000k');
      expect(resumed.attributes).not.toHaveProperty('Filter-Id');
    }));

  it('should accept a service suspended in walled-garden mode straight into the walled garden, while another tenant still rejects', () =>
    withLog(async () => {
      await settings(a, { suspension_mode: 'walled_garden', payment_page_url: PAYMENT_PAGE });
      const inA = await suspendedService(a);
      const inB = await suspendedService(b);
      const walled = await login(a, inA.radius_username);
      expect(walled.code).toBe('Access-Accept');
      expect(walled.attributes['Filter-Id']).toBeDefined();
      expect(walled.attributes['WISPr-Redirection-URL']).toBe(PAYMENT_PAGE);
      expectRejected(await login(b, inB.radius_username));
      expect(b.nas.received).toEqual([]);
    }));
});
