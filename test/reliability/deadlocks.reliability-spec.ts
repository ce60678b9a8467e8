import { randomBytes, randomInt } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import request, { type Response } from 'supertest';
import { expectError, expectSuccess } from '../support/envelope';
import { bearer } from '../support/factories';
import { type ThrowawayCluster } from '../support/pg-cluster';
import { listAllAt, queryAt, radiusRowsAt, repeats, tally } from '../support/remote';
import { ensure, uniqueSlug } from '../support/test-app';
import { createTenant, post, type Tenant } from './support/instances-client';
import {
  type Instance,
  databaseForInstances,
  startInstance,
  startInstances,
} from './support/instances-process';
import { logDir, recordSecrets } from './support/log-capture';
import type { Order } from '../support/provisioning-factory';
import { waitFor } from '../support/wait-for';

/**
 * Issue 27 item 3, deadlocks: two server processes on one Postgres, both provisioning workers on (radius-sql), and
 * many parallel `PATCH /services/{id}` (pppoe_password, static_ipv4) and `POST /services/{id}/actions` (suspend,
 * resume) on the same services through both. Before the fix `update()` held the service row and then inserted an
 * order that waited on the worker's completion of the service's open order, which waited on the service row: a
 * deadlock, answered 500, and a worker completion lost (its order carried out again once its lease ran out). Proven:
 *
 * 1. no answer is a 5xx: each is 200 (PATCH), 202 (action) or a 409 (order_in_progress, invalid_state_transition);
 * 2. every order completes, exactly once: one `provisioning_order.completed` event each, applied by one worker once;
 * 3. each accepted request made exactly one order (a PATCH changing a network field one modify, an action its own);
 * 4. each service ends consistent: its status is what its last suspend or resume made it, its password and address
 *    are those of an accepted PATCH (or the first), and the RADIUS rows carry them.
 *
 * The database is DATABASE_URL; on the embedded one (TEST_EMBEDDED_DATABASE) a throw-away cluster, since PGlite serves
 * one transaction at a time and could not deadlock. Knobs: RELIABILITY_DEADLOCK_SERVICES (6), _ROUNDS (10).
 */

const SERVICES = Number(process.env.RELIABILITY_DEADLOCK_SERVICES ?? 6);
const ROUNDS = Number(process.env.RELIABILITY_DEADLOCK_ROUNDS ?? 10);
const SLUG = uniqueSlug('deadlock');
/** Each request of a round waits up to this long before it goes. */
const SPREAD_MS = 40;

const WORKERS_ENV: Record<string, string> = {
  DATABASE_POOL_MAX: '8',
  WEBHOOK_WORKER_ENABLED: 'false',
  PROVISIONING_WORKER_ENABLED: 'true',
  NETWORK_DRIVER: 'radius-sql',
  PROVISIONING_POLL_MS: '20',
  // A completion lost before the fix is carried out again once its lease ends: short, so the suite sees it.
  PROVISIONING_LEASE_MS: '3000',
  PROVISIONING_RETRY_DELAYS_S: '0.05,0.05',
  // Traced (each apply prints its order id), held 0 ms: the trace tells how often each order reached the network.
  TEST_PROVISIONING_HOLD: `0:${SLUG}`,
};

interface ServiceRow {
  id: string;
  status: string;
  radius_username: string;
  pppoe_password: string;
  static_ipv4: string | null;
}

const secret = () => `pw-${randomBytes(8).toString('hex')}`;
let address = 0;
/** A fresh private address per request, so two PATCHes never claim one address. */
const nextAddress = () => {
  address += 1;
  return `10.${randomInt(100, 200)}.${Math.floor(address / 250)}.${(address % 250) + 1}`;
};

describe('Deadlocks on Postgres: parallel service changes and actions on two instances (issue 27 item 3)', () => {
  let cluster: ThrowawayCluster | undefined;
  let db: string;
  let a: Instance;
  let b: Instance;
  const started: Instance[] = [];

  beforeAll(async () => {
    ({ url: db, cluster } = await databaseForInstances(25_500, 25_600));
    await startInstances(
      [startInstance('deadlocks-a', db, WORKERS_ENV), startInstance('deadlocks-b', db, WORKERS_ENV)],
      started,
    );
    [a, b] = started;
  }, 120_000);

  afterAll(async () => {
    await Promise.all(started.map((instance) => instance.stop()));
    await cluster?.stop();
  }, 60_000);

  it('should answer no 5xx, complete every order once and leave each service consistent', async () => {
    const tenant: Tenant = await createTenant(a.url, SLUG);
    const { token } = tenant;
    const plan = ensure(
      await post(a.url, token, '/api/v1/service-plans', {
        name: 'Fibre 100',
        download_kbps: 100_000,
        upload_kbps: 20_000,
        price: 5900,
        currency: 'EUR',
      }),
      201,
      'create plan',
    );
    const subscriber = ensure(
      await post(a.url, token, '/api/v1/subscribers', { full_name: 'Dee Lock', status: 'active' }),
      201,
      'create subscriber',
    );
    const first = Array.from({ length: SERVICES }, secret);
    recordSecrets(...first);
    const serviceIds: string[] = [];
    for (let i = 0; i < SERVICES; i += 1) {
      const res = ensure(
        await post(a.url, token, `/api/v1/subscribers/${subscriber.body.data.id as string}/services`, {
          plan_id: plan.body.data.id,
          pppoe_username: `lock${i}`,
          pppoe_password: first[i],
        }),
        202,
        'create service',
      );
      serviceIds.push(res.body.data.service.id as string);
    }
    await settled(a.url, token, SERVICES);

    // Each round: per service a password change through one instance, an address change through the other and an
    // action (suspend, then resume the next round) through either, all at once.
    const answers: {
      kind: 'password' | 'address' | 'action';
      service: string;
      value: string;
      res: Response;
    }[] = [];
    for (let round = 0; round < ROUNDS; round += 1) {
      const action = round % 2 === 0 ? 'suspend' : 'resume';
      const sent = serviceIds.flatMap((id, i) => {
        const password = secret();
        const ip = nextAddress();
        recordSecrets(password);
        const [one, other] = (round + i) % 2 === 0 ? [a, b] : [b, a];
        return [
          {
            kind: 'password' as const,
            service: id,
            value: password,
            go: () =>
              request(one.url)
                .patch(`/api/v1/services/${id}`)
                .set(bearer(token))
                .send({ pppoe_password: password }),
          },
          {
            kind: 'address' as const,
            service: id,
            value: ip,
            go: () =>
              request(other.url).patch(`/api/v1/services/${id}`).set(bearer(token)).send({ static_ipv4: ip }),
          },
          {
            kind: 'action' as const,
            service: id,
            value: action,
            go: () => post([one, other][round % 2].url, token, `/api/v1/services/${id}/actions`, { action }),
          },
        ];
      });
      // Spread over a few tens of milliseconds: some land while the worker completes the order another opened.
      const results = await Promise.all(
        sent.map(async ({ go, ...rest }) => {
          await sleep(randomInt(0, SPREAD_MS));
          return { ...rest, res: await go() };
        }),
      );
      answers.push(...results);
    }

    // 1. No 5xx: each answer is an acceptance or a 409 the client resolves (retry after the open order, or not).
    const statuses = tally(answers.map(({ kind, res }) => `${kind} ${res.status}`));
    const failures = answers
      .filter(({ res }) => res.status >= 500)
      .map(({ res }) => `${res.status} ${JSON.stringify(res.body?.error)}`);
    expect({ statuses, failures: failures.slice(0, 5), count: failures.length }).toEqual({
      statuses,
      failures: [],
      count: 0,
    });
    for (const { kind, res } of answers) {
      if (res.status === 409) {
        expect(['order_in_progress', 'invalid_state_transition']).toContain(res.body.error.code);
        expectError(res, 409, res.body.error.code as string, res.body.error.field as string | null);
      } else {
        expectSuccess(res, kind === 'action' ? 202 : 200);
      }
    }

    // 2. Every order ends completed, exactly once (one completion event; one apply across both workers).
    const orders = await settled(a.url, token);
    expect(tally(orders.map((order) => order.status))).toEqual({ completed: orders.length });
    const completions = (
      await listAllAt<{ subject_id: string }>(a.url, token, '/api/v1/events', {
        type: 'provisioning_order.completed',
      })
    ).map((event) => event.subject_id);
    expect(repeats(completions)).toEqual({});
    expect([...completions].sort()).toEqual(orders.map((order) => order.id).sort());
    const applied = [...a.applied(), ...b.applied()].filter((id) => orders.some((order) => order.id === id));
    expect(repeats(applied)).toEqual({});
    expect(applied.length).toBe(orders.length);

    // 3. Each accepted request made one order of its kind, no more.
    const accepted = (kind: string, service: string) =>
      answers.filter(
        (answer) => answer.kind === kind && answer.service === service && answer.res.status < 300,
      );
    const rows = await queryAt<ServiceRow>(
      db,
      `SELECT id, status, radius_username, pppoe_password, static_ipv4::text AS static_ipv4
         FROM services WHERE tenant_id = $1 ORDER BY id`,
      [tenant.id],
    );
    const radius = await radiusRowsAt(
      db,
      rows.map((row) => row.radius_username),
    );
    for (const [i, id] of serviceIds.entries()) {
      const mine = orders.filter((order) => order.service_id === id).sort((x, y) => (x.id < y.id ? -1 : 1));
      const modifies = mine.filter((order) => order.action === 'modify');
      const actions = mine.filter((order) => ['suspend', 'resume'].includes(order.action));
      expect(modifies.length).toBe(accepted('password', id).length + accepted('address', id).length);
      expect(actions.length).toBe(accepted('action', id).length);

      // 4. The service as its last accepted changes left it, and the network as the service says.
      const row = rows.find((r) => r.id === id)!;
      const last = actions[actions.length - 1]?.action;
      expect(row.status).toBe(last === 'suspend' ? 'suspended' : 'active');
      expect([first[i], ...accepted('password', id).map((answer) => answer.value)]).toContain(
        row.pppoe_password,
      );
      expect([null, ...accepted('address', id).map((answer) => answer.value)]).toContain(
        row.static_ipv4?.replace(/\/32$/, '') ?? null,
      );
      const rad = radius[row.radius_username];
      expect(rad.check).toContain(`Cleartext-Password := ${row.pppoe_password}`);
      if (row.status === 'suspended') {
        // The tenant's own suspended group (docs/network.md, "Suspension mode"): `suspended:<slug>`.
        const slug = row.radius_username.split('/')[0];
        expect(rad).toMatchObject({ reply: [], groups: [`suspended:${slug} : 0`] });
      } else if (row.static_ipv4) {
        expect(rad.reply).toContain(`Framed-IP-Address := ${row.static_ipv4.replace(/\/32$/, '')}`);
      }
    }
    // 5. No worker pass failed (before the fix: "deadlock detected"); retries the runner made are logged, and counted.
    const logLines = ['deadlocks-a', 'deadlocks-b'].flatMap((name) =>
      readFileSync(join(logDir(), `${name}.log`), 'utf8').split('\n'),
    );
    expect(logLines.filter((line) => line.includes('provisioning pass failed'))).toEqual([]);
    const retried = logLines.filter((line) =>
      line.includes('transaction retried after a concurrency conflict'),
    );
    process.stdout.write(
      `deadlocks: ${retried.length} transactions retried; ${answers.length} requests (${JSON.stringify(statuses)}), ${orders.length} orders, ` +
        `applied by A ${a.applied().length}, B ${b.applied().length}\n`,
    );
  }, 180_000);
});

/** Waits until the tenant's orders are all ended (and, when given, number `count`); answers them. */
async function settled(url: string, token: string, count?: number): Promise<Order[]> {
  let last: Order[] = [];
  return waitFor(
    async () => {
      last = await listAllAt<Order>(url, token, '/api/v1/provisioning-orders');
      const open = last.filter((order) => ['acknowledged', 'in_progress'].includes(order.status));
      return open.length === 0 && (count === undefined || last.length === count) ? last : undefined;
    },
    { timeout: 60_000, interval: 50, what: 'every order ended' },
  ).catch((error: Error) => {
    throw new Error(`${error.message} (last seen: ${JSON.stringify(tally(last.map((o) => o.status)))})`);
  });
}
