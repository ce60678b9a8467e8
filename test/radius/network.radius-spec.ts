import { randomInt } from 'node:crypto';
import request from 'supertest';
import { bearer } from '../support/factories';
import { createPlan, type Service, uniquePppoeUsername } from '../support/provisioning-factory';
import type { TestApp } from '../support/test-app';
import type { ReceivedRequest } from './support/fake-nas';
import { RadiusLab, type TenantNetwork } from './support/radius-lab';

/**
 * The network end to end with a real FreeRADIUS 3 reading the API's tables on the real Postgres: the tests drive the
 * public API, then speak RADIUS to FreeRADIUS as the NAS would (from the NAS's registered address, with its secret),
 * and play the NAS's RFC 5176 listener with a fake NAS that records what the API sends it.
 */

interface Session {
  id: string;
  service_id: string;
  acct_session_id: string;
  username: string;
  online: boolean;
  started_at: string | null;
  stopped_at: string | null;
  nas_ip: string;
  framed_ip: string | null;
  bytes_in: number;
  bytes_out: number;
}

describe('The network with a real FreeRADIUS (RADIUS suite)', () => {
  const lab = new RadiusLab();
  let t: TestApp;
  let a: TenantNetwork;
  let b: TenantNetwork;
  const withLog = (run: () => Promise<void>) => lab.withLog(run);
  const activeService = (net: TenantNetwork, plan: { id: string }, overrides: Record<string, unknown> = {}) =>
    lab.activeService(net, plan.id, overrides);
  const act = lab.act.bind(lab);
  const login = lab.login.bind(lab);
  const account = lab.account.bind(lab);

  async function sessionsOf(net: TenantNetwork, service: Service): Promise<Session[]> {
    const res = await request(t.http)
      .get(`/api/v1/services/${service.id}/sessions?limit=100`)
      .set(bearer(net.tenant.token));
    expect(res.status).toBe(200);
    return res.body.data as Session[];
  }

  /** The one request the fake NAS received (after clear()), checked for a valid Request Authenticator. */
  async function onlyRequest(net: TenantNetwork): Promise<ReceivedRequest> {
    const [received] = await net.nas.waitFor(1, 5_000);
    expect(net.nas.received).toHaveLength(1);
    expect(received.authenticatorValid).toBe(true);
    return received;
  }

  beforeAll(async () => {
    t = await lab.startApp();
    a = await lab.network('tenant-a-nas-secret', 11);
    b = await lab.network('tenant-b-nas-secret', 12);
    await lab.startRadius();
  });

  afterAll(() => lab.stop());

  beforeEach(() => lab.resetNases());

  it("should accept an active service's login with its plan's rate and static IP, and reject a wrong password", () =>
    withLog(async () => {
      const plan = await createPlan(t, a.tenant.token, { download_kbps: 300_000, upload_kbps: 50_000 });
      const service = await activeService(a, plan, { static_ipv4: `203.0.113.${randomInt(1, 254)}` });
      expect(service.radius_username).toBe(`${a.tenant.slug}/${service.pppoe_username}`);

      const accept = await login(a, service.radius_username);
      expect(accept.code).toBe('Access-Accept');
      expect(accept.attributes).toMatchObject({
        'Mikrotik-Rate-Limit': '50000k/300000k',
        'WISPr-Bandwidth-Max-Down': 300_000_000,
        'WISPr-Bandwidth-Max-Up': 50_000_000,
        'Framed-IP-Address': service.static_ipv4,
      });

      expect((await login(a, service.radius_username, 'not-the-password')).code).toBe('Access-Reject');
      // The tenant's own username without its realm is nobody.
      expect((await login(a, service.pppoe_username)).code).toBe('Access-Reject');
    }));

  it('should show accounting Start, Interim-Update and Stop as a session and daily usage through the API', () =>
    withLog(async () => {
      const service = await activeService(a, await createPlan(t, a.tenant.token));
      const sessionId = `acct-${randomInt(1e9)}`;
      expect((await account(a, service.radius_username, sessionId, 'Start')).code).toBe(
        'Accounting-Response',
      );

      let [session] = await sessionsOf(a, service);
      expect(session).toMatchObject({
        service_id: service.id,
        acct_session_id: sessionId,
        username: service.radius_username,
        online: true,
        stopped_at: null,
        nas_ip: a.nas.address,
        framed_ip: '100.64.7.9',
        bytes_in: 0,
        bytes_out: 0,
      });
      expect(session.id).toMatch(/^ses_[0-9]+$/);

      await account(a, service.radius_username, sessionId, 'Interim-Update', {
        inputBytes: 1_000,
        outputBytes: 50_000,
        seconds: 60,
      });
      await account(a, service.radius_username, sessionId, 'Stop', {
        inputBytes: 3 * 2 ** 32 + 7,
        outputBytes: 80_000,
        seconds: 120,
      });
      const sessions = await sessionsOf(a, service);
      expect(sessions).toHaveLength(1);
      [session] = sessions;
      expect(session).toMatchObject({ online: false, bytes_in: 3 * 2 ** 32 + 7, bytes_out: 80_000 });
      expect(session.stopped_at).not.toBeNull();

      const today = new Date().toISOString().slice(0, 10);
      const usage = await request(t.http)
        .get(`/api/v1/services/${service.id}/usage?from=${today}&to=${today}`)
        .set(bearer(a.tenant.token));
      expect(usage.status).toBe(200);
      expect(usage.body.data).toEqual({
        service_id: service.id,
        from: today,
        to: today,
        days: [{ date: today, bytes_in: 3 * 2 ** 32 + 7, bytes_out: 80_000 }],
        total: { bytes_in: 3 * 2 ** 32 + 7, bytes_out: 80_000 },
      });
    }));

  it('should disconnect an online subscriber on suspend, reject its next login as suspended, and accept it after resume', () =>
    withLog(async () => {
      const service = await activeService(a, await createPlan(t, a.tenant.token));
      const sessionId = `susp-${randomInt(1e9)}`;
      await account(a, service.radius_username, sessionId, 'Start');

      const suspend = await act(a, service, { action: 'suspend', reason: 'non_payment' });
      expect(suspend.disconnect).toBe('acked');
      const disconnect = await onlyRequest(a);
      expect(disconnect.code).toBe('Disconnect-Request');
      expect(disconnect.attributes).toMatchObject({
        'User-Name': service.radius_username,
        'Acct-Session-Id': sessionId,
        'NAS-IP-Address': a.nas.address,
      });

      const rejected = await login(a, service.radius_username);
      expect(rejected.code).toBe('Access-Reject');
      expect(rejected.attributes['Reply-Message']).toBe('Service suspended');

      a.nas.clear();
      const resume = await act(a, service, { action: 'resume' });
      expect(resume.disconnect).toBeNull();
      expect(resume.coa).toBeNull();
      expect((await login(a, service.radius_username)).code).toBe('Access-Accept');
      expect(a.nas.received).toEqual([]);
    }));

  it('should send a CoA-Request with the new rate when the plan changes while online, and answer the new rate next', () =>
    withLog(async () => {
      const slow = await createPlan(t, a.tenant.token, { download_kbps: 20_000, upload_kbps: 5_000 });
      const fast = await createPlan(t, a.tenant.token, { download_kbps: 900_000, upload_kbps: 200_000 });
      const service = await activeService(a, slow);
      const sessionId = `coa-${randomInt(1e9)}`;
      await account(a, service.radius_username, sessionId, 'Start');

      const change = await act(a, service, { action: 'change_plan', plan_id: fast.id });
      expect(change.coa).toBe('acked');
      expect(change.disconnect).toBeNull();
      const coa = await onlyRequest(a);
      expect(coa.code).toBe('CoA-Request');
      expect(coa.attributes).toMatchObject({
        'User-Name': service.radius_username,
        'Acct-Session-Id': sessionId,
        'Mikrotik-Rate-Limit': '200000k/900000k',
        'WISPr-Bandwidth-Max-Down': 900_000_000,
        'WISPr-Bandwidth-Max-Up': 200_000_000,
      });
      expect((await login(a, service.radius_username)).attributes['Mikrotik-Rate-Limit']).toBe(
        '200000k/900000k',
      );
    }));

  it('should reject and disconnect a terminated service', () =>
    withLog(async () => {
      const service = await activeService(a, await createPlan(t, a.tenant.token));
      const sessionId = `term-${randomInt(1e9)}`;
      await account(a, service.radius_username, sessionId, 'Start');

      const terminate = await act(a, service, { action: 'terminate' });
      expect(terminate.disconnect).toBe('acked');
      const disconnect = await onlyRequest(a);
      expect(disconnect).toMatchObject({
        code: 'Disconnect-Request',
        attributes: expect.objectContaining({ 'Acct-Session-Id': sessionId }) as unknown,
      });
      expect((await login(a, service.radius_username)).code).toBe('Access-Reject');
    }));

  it("should record the NAS's NAK, a silent NAS as timeout after the retry, and an offline subscriber as no_session", () =>
    withLog(async () => {
      const plan = await createPlan(t, a.tenant.token);
      const nak = await activeService(a, plan);
      await account(a, nak.radius_username, `nak-${randomInt(1e9)}`, 'Start');
      a.nas.answer('nak');
      expect((await act(a, nak, { action: 'suspend', reason: 'manual' })).disconnect).toBe('nak');

      a.nas.clear();
      a.nas.answer('silent');
      const silent = await activeService(a, plan);
      await account(a, silent.radius_username, `silent-${randomInt(1e9)}`, 'Start');
      expect((await act(a, silent, { action: 'suspend', reason: 'manual' })).disconnect).toBe('timeout');
      // RADIUS_COA_RETRIES=1: the same packet twice.
      expect(a.nas.received).toHaveLength(2);
      expect(a.nas.received[1].raw.equals(a.nas.received[0].raw)).toBe(true);

      a.nas.clear();
      a.nas.answer('ack');
      const offline = await activeService(a, plan);
      const sessionId = `off-${randomInt(1e9)}`;
      await account(a, offline.radius_username, sessionId, 'Start');
      await account(a, offline.radius_username, sessionId, 'Stop', { seconds: 5 });
      expect((await act(a, offline, { action: 'suspend', reason: 'manual' })).disconnect).toBe('no_session');
      expect(a.nas.received).toEqual([]);
    }));

  it('should keep two tenants with the same PPPoE username apart: each its own plan, sessions and disconnects', () =>
    withLog(async () => {
      const username = uniquePppoeUsername('same');
      const inA = await activeService(
        a,
        await createPlan(t, a.tenant.token, { download_kbps: 10_000, upload_kbps: 1_000 }),
        { pppoe_username: username },
      );
      const inB = await activeService(
        b,
        await createPlan(t, b.tenant.token, { download_kbps: 70_000, upload_kbps: 7_000 }),
        { pppoe_username: username, pppoe_password: 'another-password-7' },
      );
      expect(inA.radius_username).not.toBe(inB.radius_username);

      expect((await login(a, inA.radius_username)).attributes['Mikrotik-Rate-Limit']).toBe('1000k/10000k');
      expect(
        (await login(b, inB.radius_username, 'another-password-7')).attributes['Mikrotik-Rate-Limit'],
      ).toBe('7000k/70000k');
      expect((await login(b, inB.radius_username)).code).toBe('Access-Reject');

      const sessionA = `twin-a-${randomInt(1e9)}`;
      const sessionB = `twin-b-${randomInt(1e9)}`;
      await account(a, inA.radius_username, sessionA, 'Start');
      await account(b, inB.radius_username, sessionB, 'Start');
      expect((await sessionsOf(a, inA)).map((session) => session.acct_session_id)).toEqual([sessionA]);
      expect((await sessionsOf(b, inB)).map((session) => session.acct_session_id)).toEqual([sessionB]);
      const foreign = await request(t.http)
        .get(`/api/v1/services/${inB.id}/sessions`)
        .set(bearer(a.tenant.token));
      expect(foreign.status).toBe(404);

      expect((await act(b, inB, { action: 'suspend', reason: 'manual' })).disconnect).toBe('acked');
      expect((await onlyRequest(b)).attributes['Acct-Session-Id']).toBe(sessionB);
      expect(a.nas.received).toEqual([]);
      expect((await login(a, inA.radius_username)).code).toBe('Access-Accept');
    }));
});
