import { randomInt } from 'node:crypto';
import request from 'supertest';
import { bearer } from '../support/factories';
import { createPlan, type Service, type ServicePlan } from '../support/provisioning-factory';
import type { TestApp } from '../support/test-app';
import { waitUntil } from '../support/wait-for';
import type { RadiusReply } from './support/radius-client';
import { RadiusLab, type TenantNetwork } from './support/radius-lab';

/**
 * Issue #33 item 4 against a real FreeRADIUS 3 on the real Postgres: a tenant's suspension mode. In `reject` a
 * suspended login is rejected; in `walled_garden` it is accepted with the restricted profile (Mikrotik-Address-List,
 * Filter-Id, WISPr-Redirection-URL) and nothing of its plan; switching the mode moves the services already suspended,
 * and their sessions online get a Disconnect-Request so they log in again into the new profile.
 */

const PAYMENT_PAGE = 'https://pay.example.net/suspended';

type Network = TenantNetwork & { plan: ServicePlan };

describe('Walled garden with a real FreeRADIUS (RADIUS suite)', () => {
  const lab = new RadiusLab();
  let t: TestApp;
  let a: Network;
  let b: Network;
  const withLog = (run: () => Promise<void>) => lab.withLog(run);
  const act = lab.act.bind(lab);
  const login = lab.login.bind(lab);

  async function network(secret: string, second: number): Promise<Network> {
    const net = await lab.network(secret, second);
    const plan = await createPlan(t, net.tenant.token, { download_kbps: 100_000, upload_kbps: 20_000 });
    return { ...net, plan };
  }

  const activeService = (net: Network): Promise<Service> => lab.activeService(net, net.plan.id);

  async function suspendedService(net: Network): Promise<Service> {
    const service = await activeService(net);
    await act(net, service, { action: 'suspend', reason: 'non_payment' });
    return service;
  }

  const start = (net: Network, username: string, sessionId: string): Promise<RadiusReply> =>
    lab.account(net, username, sessionId, 'Start', { framedIp: '100.64.9.9' });

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

  const expectRejected = (reply: RadiusReply) => {
    expect(reply.code).toBe('Access-Reject');
    expect(reply.attributes['Reply-Message']).toBe('Service suspended');
  };

  beforeAll(async () => {
    t = await lab.startApp();
    a = await network('walled-a-nas-secret', 21);
    b = await network('walled-b-nas-secret', 22);
    await lab.startRadius();
  });

  afterAll(() => lab.stop());

  beforeEach(() => lab.resetNases());

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
