import { randomInt } from 'node:crypto';
import request from 'supertest';
import { bearer } from '../support/factories';
import { startThrowawayCluster, type ThrowawayCluster } from '../support/pg-cluster';
import { type ProvisioningServer, startProvisioningServer } from '../support/provisioning-process';
import { suiteDatabaseUrl } from '../support/server-process';
import { createTenantWithToken, uniqueSlug } from '../support/test-app';
import {
  expectedRadiusLines,
  listAllAt,
  ordersEnded,
  queryAt,
  radiusRowsAt,
  repeats,
} from '../support/remote';
import type { Order } from '../support/provisioning-factory';
import { waitFor } from '../support/wait-for';

/**
 * Issue: provisioning orders survive a crash of their worker and are shared by several instances, each carried out
 * once. The servers run as child processes (src/main.ts, preloaded by support/provisioning-process.ts so the
 * radius-sql driver can be held after its write) so they can be killed with SIGKILL.
 *
 * Where the rows are read from: the suite's database is always reachable by URL — on the embedded database the
 * global setup serves PGlite on a socket (DATABASE_URL), in CI's reliability pass DATABASE_URL is the Postgres server
 * — so, as webhook-crash.reliability-spec.ts does, the server processes run on DATABASE_URL and this suite reads the
 * RADIUS and order tables with a plain `pg` client on the same URL. That works the same on both databases; a server
 * on its own DATA_DIR would hold that folder's lock and keep the rows out of reach while it runs.
 */

interface Service {
  id: string;
  status: string;
  radius_username: string;
  activated_at: string | null;
}
interface Event {
  type: string;
  subject_id: string;
}

/** What the worker is given in these suites: a quick poll, quick retries (a retry shows as attempts > 1). */
const WORKER_ENV = { PROVISIONING_POLL_MS: '50', PROVISIONING_RETRY_DELAYS_S: '0.05,0.05' };
const PLAN = { download_kbps: 50_000, upload_kbps: 10_000 };

async function createPlan(url: string, token: string): Promise<string> {
  const res = await request(url)
    .post('/api/v1/service-plans')
    .set(bearer(token))
    .send({ name: 'Fibre 50', ...PLAN, price: 4900, currency: 'EUR' });
  expect(res.status).toBe(201);
  return res.body.data.id as string;
}

async function createSubscribers(url: string, token: string, count: number): Promise<string[]> {
  const created = await Promise.all(
    Array.from({ length: count }, (_, i) =>
      request(url)
        .post('/api/v1/subscribers')
        .set(bearer(token))
        .send({ full_name: `Provisioned ${i}`, status: 'pending' }),
    ),
  );
  expect(created.map((res) => res.status)).toEqual(Array(count).fill(201));
  return created.map((res) => res.body.data.id as string);
}

const passwordOf = (username: string) => `secret-${username}`;

/**
 * `count` services (so `count` activate orders), service i ordered through urls[i % urls.length] for subscriber
 * i % subscribers, `parallel` requests at a time. Answers the services and their orders, in order.
 */
async function orderServices(
  urls: string[],
  token: string,
  planId: string,
  subscriberIds: string[],
  count: number,
  parallel: number,
  /** The first username's number (`user<first>`), for a second round of orders on the same tenant. */
  first = 0,
): Promise<{ services: Service[]; orders: Order[] }> {
  const services: Service[] = [];
  const orders: Order[] = [];
  for (let start = 0; start < count; start += parallel) {
    const batch = Array.from({ length: Math.min(parallel, count - start) }, (_, k) => first + start + k);
    const answers = await Promise.all(
      batch.map((i) => {
        const username = `user${String(i).padStart(3, '0')}`;
        return request(urls[i % urls.length])
          .post(`/api/v1/subscribers/${subscriberIds[i % subscriberIds.length]}/services`)
          .set(bearer(token))
          .send({ plan_id: planId, pppoe_username: username, pppoe_password: passwordOf(username) });
      }),
    );
    for (const res of answers) {
      expect({ status: res.status, body: res.status === 202 ? null : res.body }).toEqual({
        status: 202,
        body: null,
      });
      services.push(res.body.data.service as Service);
      orders.push(res.body.data.order as Order);
    }
  }
  return { services, orders };
}

/** The subject ids of the tenant's events of `type`, sorted, repeats kept. */
async function subjectsOf(url: string, token: string, type: string): Promise<string[]> {
  const events = await listAllAt<Event>(url, token, '/api/v1/events', { type });
  return events.map((event) => event.subject_id).sort();
}

/** What radius-sql must leave for an active service of PLAN without a static address. */
function activeRows(service: Service) {
  return expectedRadiusLines(
    'active',
    passwordOf(service.radius_username.split('/')[1]),
    PLAN,
    service.radius_username.split('/')[0],
  );
}

describe('Provisioning orders across a crash and across instances', () => {
  const started: ProvisioningServer[] = [];
  let cluster: ThrowawayCluster | undefined;

  const start = async (
    url: string,
    hold: { ms: number; tenantSlug: string },
    env: Record<string, string>,
  ) => {
    const server = await startProvisioningServer(url, hold, env);
    started.push(server);
    return server;
  };

  afterAll(async () => {
    for (const server of started) {
      await server.stop('SIGKILL');
    }
    await cluster?.stop();
  });

  it('should complete every order exactly once after the worker is killed with SIGKILL mid-order and restarted', async () => {
    const SERVICES = 40;
    const RECORDED = 10;
    const db = suiteDatabaseUrl();
    // Each apply writes the RADIUS rows and then holds the order before the worker records it, so the kill lands
    // between the network write and the completion of a batch.
    const slug = uniqueSlug('prov');
    // Held 2.5 s after the network write: long enough that the check below and the kill land inside the hold even
    // on a busy machine (the process also runs the automation and bill run workers); the lease outlasts it.
    const first = await start(
      db,
      { ms: 2500, tenantSlug: slug },
      { ...WORKER_ENV, PROVISIONING_LEASE_MS: '6000' },
    );
    const tenant = await createTenantWithToken(first.url, ['admin'], slug);
    const planId = await createPlan(first.url, tenant.token);
    const subscriberIds = await createSubscribers(first.url, tenant.token, 4);
    const completed = async () =>
      listAllAt<Order>(first.url, tenant.token, '/api/v1/provisioning-orders', { status: 'completed' });
    // A first round, recorded; then the rest, written to the network and held: the worker claims every due order at
    // once, so the two rounds are what leaves some orders recorded and others applied but not yet recorded.
    const recorded = await orderServices(
      [first.url],
      tenant.token,
      planId,
      subscriberIds,
      RECORDED,
      RECORDED,
    );
    await waitFor(async () => ((await completed()).length === RECORDED ? true : undefined), {
      timeout: 30_000,
      interval: 50,
      what: 'the first round recorded',
    });
    const held = await orderServices(
      [first.url],
      tenant.token,
      planId,
      subscriberIds,
      SERVICES - RECORDED,
      SERVICES - RECORDED,
      RECORDED,
    );
    const services = [...recorded.services, ...held.services];
    const orderIds = [...recorded.orders, ...held.orders].map((order) => order.id).sort();
    const serviceIds = services.map((service) => service.id).sort();

    // Some orders are recorded, and the next ones are written to RADIUS and held: kill now.
    await waitFor(
      async () => {
        const done = await completed();
        const applied = first.applied().filter((id) => orderIds.includes(id));
        return done.length > 0 && applied.length > done.length ? true : undefined;
      },
      { timeout: 30_000, interval: 50, what: 'a completed order, and applied ones not yet recorded' },
    );
    expect(await first.stop('SIGKILL')).toBe('SIGKILL');

    // The state the crash left: read from the database, since no server is running.
    const atKill = await queryAt<{ id: string; status: string; attempts: number }>(
      db,
      'SELECT id, status, attempts FROM provisioning_orders WHERE tenant_id = $1',
      [tenant.tenantId],
    );
    expect(atKill).toHaveLength(SERVICES);
    const openAtKill = atKill.filter((order) => order.status !== 'completed').map((order) => order.id);
    const doneAtKill = atKill.filter((order) => order.status === 'completed').map((order) => order.id);
    expect(
      atKill.filter((order) => !['completed', 'in_progress', 'acknowledged'].includes(order.status)),
    ).toEqual([]);
    expect(doneAtKill.length).toBeGreaterThan(0);
    expect(openAtKill.length).toBeGreaterThan(0);
    // Written to the network by the killed process but never recorded: the restart must apply these again.
    const writtenNotRecorded = first.applied().filter((id) => openAtKill.includes(id));
    expect(writtenNotRecorded.length).toBeGreaterThan(0);
    // The killed process recorded only orders it had applied.
    expect(doneAtKill.filter((id) => !first.applied().includes(id))).toEqual([]);

    // Restarted on the same data, unheld, with a short lease: the claims of the dead process run out and are taken.
    const second = await start(
      db,
      { ms: 0, tenantSlug: slug },
      { ...WORKER_ENV, PROVISIONING_LEASE_MS: '2000' },
    );
    const ended = await ordersEnded(second.url, tenant.token, SERVICES, 30_000);

    expect(ended.map((order) => order.status)).toEqual(Array(SERVICES).fill('completed'));
    expect(ended.map((order) => order.last_error)).toEqual(Array(SERVICES).fill(null));
    // The restarted process carried out exactly the orders left open, each once; none recorded before the crash.
    const secondApplied = second.applied().filter((id) => orderIds.includes(id));
    expect(repeats(secondApplied)).toEqual({});
    expect([...secondApplied].sort()).toEqual([...openAtKill].sort());
    // One more claim for each order left open (taken over, or first taken, by the restarted process), none for the
    // others.
    const attemptsAtKill = new Map(atKill.map((order) => [order.id, order.attempts]));
    expect(ended.map((order) => ({ id: order.id, attempts: order.attempts }))).toEqual(
      ended.map((order) => ({
        id: order.id,
        attempts: attemptsAtKill.get(order.id)! + (openAtKill.includes(order.id) ? 1 : 0),
      })),
    );

    // Exactly once in the event log: one completion per order, one activation per service, no failure.
    expect(await subjectsOf(second.url, tenant.token, 'provisioning_order.completed')).toEqual(orderIds);
    expect(await subjectsOf(second.url, tenant.token, 'service.activated')).toEqual(serviceIds);
    expect(await subjectsOf(second.url, tenant.token, 'provisioning_order.failed')).toEqual([]);

    const after = await listAllAt<Service>(second.url, tenant.token, '/api/v1/services');
    expect(after.map((service) => service.id).sort()).toEqual(serviceIds);
    expect(after.filter((service) => service.status !== 'active' || !service.activated_at)).toEqual([]);

    // RADIUS: each username exactly once, applying an order twice left the rows of applying it once.
    const rows = await radiusRowsAt(
      db,
      services.map((service) => service.radius_username),
    );
    for (const service of services) {
      expect({ username: service.radius_username, ...rows[service.radius_username] }).toEqual({
        username: service.radius_username,
        ...activeRows(service),
      });
    }

    expect(await second.stop('SIGTERM')).toBe('0');
  }, 90_000);

  it('should carry out 200 orders across two server processes on one database, each exactly once', async () => {
    const SERVICES = 200;
    // The embedded database serves one transaction at a time to everyone, so two instances could not race on it:
    // there the two processes share a throw-away PostgreSQL cluster of their own; on Postgres, DATABASE_URL.
    let db: string;
    // A short hold keeps a backlog both workers claim from; the lease is far longer than any order takes.
    const env: Record<string, string> = { ...WORKER_ENV, PROVISIONING_LEASE_MS: '30000' };
    if (process.env.TEST_EMBEDDED_DATABASE === 'true') {
      cluster = await startThrowawayCluster(randomInt(20_000, 30_000));
      db = cluster.url;
      env.DATABASE_POOL_MAX = '20'; // the app's default on a server, not the embedded database's single connection
    } else {
      db = suiteDatabaseUrl();
    }
    const slug = uniqueSlug('prov');
    const first = await start(db, { ms: 30, tenantSlug: slug }, env);
    const second = await start(db, { ms: 30, tenantSlug: slug }, env);
    const tenant = await createTenantWithToken(first.url, ['admin'], slug);
    const planId = await createPlan(first.url, tenant.token);
    const subscriberIds = await createSubscribers(second.url, tenant.token, 10);
    const { services, orders } = await orderServices(
      [first.url, second.url],
      tenant.token,
      planId,
      subscriberIds,
      SERVICES,
      20,
    );
    const orderIds = orders.map((order) => order.id).sort();
    const serviceIds = services.map((service) => service.id).sort();
    expect(new Set(orderIds).size).toBe(SERVICES);

    const ended = await ordersEnded(first.url, tenant.token, SERVICES, 60_000);
    expect(ended.filter((order) => order.status !== 'completed')).toEqual([]);
    // Each order claimed once: no lease ran out, no two workers took the same order, no retry.
    expect(ended.filter((order) => order.attempts !== 1 || order.last_error !== null)).toEqual([]);

    // Each order went to the network exactly once, and both processes did part of the work.
    const byFirst = first.applied().filter((id) => orderIds.includes(id));
    const bySecond = second.applied().filter((id) => orderIds.includes(id));
    expect(repeats([...byFirst, ...bySecond])).toEqual({});
    expect([...byFirst, ...bySecond].sort()).toEqual(orderIds);
    expect(byFirst.length).toBeGreaterThan(0);
    expect(bySecond.length).toBeGreaterThan(0);

    expect(await subjectsOf(second.url, tenant.token, 'provisioning_order.completed')).toEqual(orderIds);
    expect(await subjectsOf(first.url, tenant.token, 'service.activated')).toEqual(serviceIds);
    expect(await subjectsOf(second.url, tenant.token, 'provisioning_order.failed')).toEqual([]);
    const after = await listAllAt<Service>(second.url, tenant.token, '/api/v1/services', {
      status: 'active',
    });
    expect(after.map((service) => service.id).sort()).toEqual(serviceIds);

    const rows = await radiusRowsAt(
      db,
      services.map((service) => service.radius_username),
    );
    expect(
      services
        .filter((service) => rows[service.radius_username].check.length !== 1)
        .map((s) => s.radius_username),
    ).toEqual([]);
    expect(rows[services[0].radius_username]).toEqual(activeRows(services[0]));

    expect(await first.stop('SIGTERM')).toBe('0');
    expect(await second.stop('SIGTERM')).toBe('0');
  }, 120_000);
});
