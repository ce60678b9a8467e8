import { randomInt } from 'node:crypto';
import request from 'supertest';
import { bearer } from '../../support/factories';
import {
  createService,
  DEFAULT_PPPOE_PASSWORD,
  type Order,
  postAction,
  PROVISIONING_SCOPES,
  type Service,
  waitForOrder,
} from '../../support/provisioning-factory';
import { createSubscriber } from '../../support/subscriber-factory';
import {
  createTenantWithToken,
  startTestApp,
  type TenantWithToken,
  type TestApp,
} from '../../support/test-app';
import { startFakeNas, type FakeNas } from './fake-nas';
import { freeRadiusBinary, startFreeRadius, type FreeRadius } from './freeradius';
import { accessRequest, accountingRequest, type RadiusReply } from './radius-client';

const DATABASE_URL = process.env.DATABASE_URL ?? '';

/** Provisioning fast enough for a suite: orders polled every 50 ms, CoA answers waited for 300 ms, tried twice. */
const FAST_PROVISIONING = {
  PROVISIONING_POLL_MS: '50',
  PROVISIONING_RETRY_DELAYS_S: '0.05,0.05',
  RADIUS_COA_TIMEOUT_MS: '300',
  RADIUS_COA_RETRIES: '1',
};

/** An address of its own on the loopback network (127.<second>.x.y), so each suite's NAS is told apart. */
export const loopback = (second: number): string => `127.${second}.${randomInt(256)}.${randomInt(2, 255)}`;

/** A tenant and the NAS it registered through the API: its address and secret are what its packets come with. */
export interface TenantNetwork {
  tenant: TenantWithToken;
  nasId: string;
  secret: string;
  address: string;
  /** The NAS's RFC 5176 listener, when the suite plays one. */
  nas: FakeNas;
}

export interface AccountingCounters {
  inputBytes?: number;
  outputBytes?: number;
  seconds?: number;
  framedIp?: string;
}

/**
 * What every RADIUS suite stands on: the API started on the real Postgres, a real FreeRADIUS 3 reading its tables,
 * tenants registering NASes through the API (before FreeRADIUS starts: it reads `nas` then), and packets sent as
 * those NASes would send them (from the NAS's address, with its secret).
 */
export class RadiusLab {
  t!: TestApp;
  server!: FreeRadius;
  private readonly networks: TenantNetwork[] = [];

  /** Starts the app (beforeAll); FreeRADIUS starts with startRadius, once the suite's NASes are registered. */
  async startApp(env: Record<string, string> = {}): Promise<TestApp> {
    if (!DATABASE_URL || !freeRadiusBinary()) {
      throw new Error('the RADIUS suite needs DATABASE_URL (a Postgres) and FreeRADIUS 3 installed');
    }
    this.t = await startTestApp({ ...FAST_PROVISIONING, ...env });
    return this.t;
  }

  async startRadius(clientSecret = 'static-client-secret'): Promise<FreeRadius> {
    this.server = await startFreeRadius({ databaseUrl: DATABASE_URL, clientSecret });
    return this.server;
  }

  /** A new tenant with a fake NAS of its own at a loopback address, registered through the API. */
  async network(
    secret: string,
    second: number,
    scopes: readonly string[] = PROVISIONING_SCOPES,
  ): Promise<TenantNetwork> {
    const tenant = await createTenantWithToken(this.t, [...scopes]);
    const nas = await startFakeNas({ address: loopback(second), secret });
    const res = await request(this.t.http)
      .post('/api/v1/nas')
      .set(bearer(tenant.token))
      .send({ name: `bng-${second}`, ip: nas.address, secret, type: 'mikrotik', coa_port: nas.port });
    expect(res.status).toBe(201);
    expect(JSON.stringify(res.body)).not.toContain(secret);
    const network = { tenant, nas, nasId: res.body.data.id as string, secret, address: nas.address };
    this.networks.push(network);
    return network;
  }

  async stop(): Promise<void> {
    await this.server?.stop();
    for (const network of this.networks) {
      await network.nas.close();
    }
    await this.t?.close();
  }

  /** Forgets what the fake NASes received and has them acknowledge again (beforeEach). */
  resetNases(): void {
    for (const network of this.networks) {
      network.nas.clear();
      network.nas.answer('ack');
    }
  }

  /** On failure, what FreeRADIUS printed helps more than the assertion alone. */
  async withLog(run: () => Promise<void>): Promise<void> {
    try {
      await run();
    } catch (error) {
      (error as Error).message += `\n--- FreeRADIUS output (tail) ---\n${this.server.log().slice(-4000)}`;
      throw error;
    }
  }

  /** A new active subscriber's service on `planId`, its activation order completed. */
  async activeService(
    net: TenantNetwork,
    planId: string,
    overrides: Record<string, unknown> = {},
  ): Promise<Service> {
    const subscriber = await createSubscriber(this.t, net.tenant.token, { status: 'active' });
    const { service, order } = await createService(this.t, net.tenant.token, subscriber.id, {
      plan_id: planId,
      ...overrides,
    });
    const done = await waitForOrder(this.t, net.tenant.token, order.id, ['completed', 'failed']);
    expect(done.status).toBe('completed');
    return service;
  }

  /** Sends an action and waits for its order to complete. */
  async act(net: TenantNetwork, service: Service, body: Record<string, unknown>): Promise<Order> {
    const res = await postAction(this.t, net.tenant.token, service.id, body);
    expect(res.status).toBe(202);
    const order = await waitForOrder(this.t, net.tenant.token, res.body.data.id as string, [
      'completed',
      'failed',
    ]);
    expect(order.status).toBe('completed');
    return order;
  }

  /** An Access-Request from the tenant's NAS (its address and secret), as a PPPoE login. */
  login(net: TenantNetwork, username: string, password = DEFAULT_PPPOE_PASSWORD): Promise<RadiusReply> {
    return accessRequest({
      server: { address: '127.0.0.1', port: this.server.authPort },
      secret: net.secret,
      source: net.address,
      userName: username,
      password,
      attributes: [['NAS-IP-Address', net.address]],
    });
  }

  /** Accounting from the tenant's NAS for one session, with the session's running totals. */
  account(
    net: TenantNetwork,
    username: string,
    sessionId: string,
    statusType: 'Start' | 'Interim-Update' | 'Stop',
    counters: AccountingCounters = {},
  ): Promise<RadiusReply> {
    return accountingRequest({
      server: { address: '127.0.0.1', port: this.server.acctPort },
      secret: net.secret,
      source: net.address,
      statusType,
      attributes: [
        ['User-Name', username],
        ['Acct-Session-Id', sessionId],
        ['NAS-IP-Address', net.address],
        ['Framed-IP-Address', counters.framedIp ?? '100.64.7.9'],
        ...(counters.seconds === undefined
          ? []
          : [['Acct-Session-Time', counters.seconds] as [string, number]]),
      ],
      inputBytes: counters.inputBytes,
      outputBytes: counters.outputBytes,
    });
  }
}
