import request from 'supertest';
import { RUN_ENV } from './billing-run-factory';
import { bearer } from './factories';
import { listen } from './subscriber-factory';
import { createTenantWithToken, ensure, startTestApp, type TenantWithToken, type TestApp } from './test-app';
import { waitUntil } from './wait-for';

/**
 * Issue #32 item 5: suites that replay time through the API alone (docs/test-clocks.md). The app runs on the real
 * system Clock; a live tenant (the owner) makes a test clock, whose test tenant is the one the suite acts as, and the
 * suite moves that tenant's time only by advancing the clock and waiting for it to be `ready` again.
 */

export interface TestClockRecord {
  id: string;
  name: string;
  frozen_time: string;
  status: 'ready' | 'advancing' | 'internal_failure';
  advance_to: string | null;
  tenant_id: string;
  created_at: string;
  updated_at: string;
}

/** A clock as POST /test-clocks answers it: with its test tenant and that tenant's admin token (shown once). */
export interface CreatedTestClock extends TestClockRecord {
  tenant: { id: string; slug: string };
  token: string;
}

/** A test clock, its owner (the live tenant that made it and alone reads and advances it) and its test tenant. */
export interface ClockedTenant {
  owner: TenantWithToken;
  clock: CreatedTestClock;
  /** The test tenant's admin token: every action of the suite's operator. */
  token: string;
}

/**
 * The whole app on the real Clock (createApp without a `clock`), listening on a loopback port so parallel requests
 * share one server, with RUN_ENV's quick workers (automation, provisioning; the bill run scheduler off: a test tenant's
 * days are billed by its clock's advances, docs/test-clocks.md) and `env` on top.
 */
export async function startClockApp(env: Record<string, string> = {}): Promise<TestApp> {
  const t = await startTestApp({ ...RUN_ENV, ...env });
  await listen(t);
  return t;
}

/** A live tenant with an admin token, and a test clock it makes at `frozenTime` (201), with its test tenant. */
export async function createClockedTenant(
  t: TestApp,
  frozenTime: string,
  name = 'Rehearsal',
): Promise<ClockedTenant> {
  const owner = await createTenantWithToken(t);
  const res = await request(t.http)
    .post('/api/v1/test-clocks')
    .set(bearer(owner.token))
    .send({ name, frozen_time: frozenTime });
  const clock = ensure(res, 201, `create test clock at ${frozenTime}`).body.data as CreatedTestClock;
  return { owner, clock, token: clock.token };
}

/** GET /test-clocks/{id} with the owner's token. */
export async function getTestClock(t: TestApp, ownerToken: string, id: string): Promise<TestClockRecord> {
  const res = await request(t.http).get(`/api/v1/test-clocks/${id}`).set(bearer(ownerToken));
  return ensure(res, 200, `get test clock ${id}`).body.data as TestClockRecord;
}

/**
 * Advances the clock to `to` (202, status `advancing`) and polls GET /test-clocks/{id} until it is no longer
 * advancing; answers the clock, which must then be `ready` at `to` (an advance that failed throws, with the clock).
 * Every day's bill run, dunning and the rules' reactions to them up to `to` are done once it is ready.
 */
export async function advanceTestClock(
  t: TestApp,
  ownerToken: string,
  id: string,
  to: string,
  timeout = 120_000,
): Promise<TestClockRecord> {
  const res = await request(t.http)
    .post(`/api/v1/test-clocks/${id}/advance`)
    .set(bearer(ownerToken))
    .send({ to });
  const advancing = ensure(res, 202, `advance test clock ${id} to ${to}`).body.data as TestClockRecord;
  if (advancing.status !== 'advancing' || advancing.advance_to !== to) {
    throw new Error(`advance of ${id} to ${to} answered ${JSON.stringify(advancing)}`);
  }
  const done = await waitUntil(
    () => getTestClock(t, ownerToken, id),
    (clock) => clock.status !== 'advancing',
    { timeout, interval: 50, what: `test clock ${id} ready at ${to}` },
  );
  if (done.status !== 'ready' || done.frozen_time !== to) {
    throw new Error(`advance of ${id} to ${to} ended ${JSON.stringify(done)}`);
  }
  return done;
}
