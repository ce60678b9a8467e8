import { randomBytes, randomInt } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import request from 'supertest';
import { bearer } from '../support/factories';
import { startThrowawayCluster, type ThrowawayCluster } from '../support/pg-cluster';
import { killInBatch } from '../support/billing-run-process';
import { createTenantWithToken, uniqueSlug } from '../support/test-app';
import {
  deleteAllWebhooks,
  type ReceivedRequest,
  verifies,
  WebhookReceiver,
} from '../support/webhook-receiver';
import { type CrashDatabase, type CrashServer, openDatabase, startCrashServer } from './support/crash-server';
import { recordSecrets } from './support/log-capture';
import { expectedRadiusLines, listAllAt, queryAt, radiusRowsAt, repeats } from '../support/remote';
import type { Order } from '../support/provisioning-factory';
import { waitFor } from '../support/wait-for';

/**
 * Issue 18 item 3: the server is SIGKILLed in the middle of a mixed burst and restarted on the same data, on the
 * embedded database (a data folder) and on Postgres (DATABASE_URL when it names a server, else a throw-away cluster);
 * nothing a client was told is lost, nothing is half written and nothing is done twice.
 *
 * The server runs as a child process (src/main.ts, support/crash-server.ts) whose bill-run batches are held open
 * inside their transaction and whose provisioning orders (NETWORK_DRIVER=radius-sql, on both databases) are held
 * between their RADIUS write and their completion. Against one tenant, with a webhook subscription for every event to
 * a real receiver that answers slowly, the suite sends at once: subscriber creates, payments each followed by an
 * allocation to an invoice, one bill run of BILLED subscribers, new services (activate orders) and suspensions
 * (suspend orders), every POST with an Idempotency-Key. Once each stream has had OK_BEFORE_KILL 2xx answers,
 * BATCHES_BEFORE_KILL batches of the run have committed and the receiver has been called, the process is killed the
 * moment it opens the next batch. The state the crash left is read from the database while no server runs (the run
 * mid-flight without the open batch's writes, orders open, deliveries owed), then the server is started again, unheld,
 * and:
 * - every 2xx answered before the kill is there (GET by id), and the same request with the same key replays the same
 *   answer; a request left without an answer, sent again with its key, ends with exactly one record;
 * - no half-written change: each invoice's amount_paid is its allocations, each payment's allocated amount is its
 *   allocations and at most its amount, each balance is its ledger sum and what its invoices and payments make; every
 *   subscriber, transaction, allocation, invoice, order and suspension has its event, once;
 * - every event stored after the subscription (those owed at the kill included) is answered by the receiver, every
 *   request of one event carries that event's webhook-id and the same signed body;
 * - every order completes exactly once (one completion event, never carried out again after it was recorded, the
 *   RADIUS rows of one application) and the bill run completes with one invoice per (subscriber, period);
 * - no answer was stored after its transaction (the idempotency layer's warning): a crash there would leave a key
 *   that answers 409 until it expires.
 * A summary line per database gives the figures and how long each phase took (docs/reliability.md).
 *
 * Knobs: RELIABILITY_CRASH_BILLED (subscribers of the bill run, default 40), RELIABILITY_CRASH_PARALLEL (requests in
 * flight per stream, default 3).
 */

const BILLED = Number(process.env.RELIABILITY_CRASH_BILLED ?? 40);
const PARALLEL = Number(process.env.RELIABILITY_CRASH_PARALLEL ?? 3);
/** Subscribers billed on the 15th (not due on AS_OF) whose services are ordered and suspended, and who pay. */
const NETWORK_SUBSCRIBERS = 6;
/** Requests per stream at most; the kill comes long before. */
const STREAM_CAP = 400;
const BATCH_SIZE = 2;
/** The kill lands in the batch after this many have committed (of BILLED / BATCH_SIZE). */
const BATCHES_BEFORE_KILL = 6;
/** How long the first process holds each bill-run batch open, and each order after its RADIUS write. */
const BATCH_HOLD_MS = 300;
const ORDER_HOLD_MS = 250;
/** The 2xx answers each stream must have had before the kill. */
const OK_BEFORE_KILL: Record<Stream, number> = {
  run: 1,
  subscriber: 20,
  payment: 4,
  allocation: 2,
  service: 4,
  suspend: 2,
};
/** A billing day: the run names it, so no clock is involved. */
const AS_OF = '2026-03-01';
const PLAN = { name: 'Fibre 300', download_kbps: 300_000, upload_kbps: 50_000, price: 4900, currency: 'EUR' };
const INVOICE_TOTAL = 5000;
const PAYMENT = 800;
const ALLOCATION = 500;
/** How the receiver answers before the kill: slower than the burst makes events, so a backlog builds. */
const SLOW_REPLY = { status: 200, delayMs: 400 };
const TIMEOUT_MS = 240_000;

/** Quick workers, leases the holds fit in, no scheduler or automation of its own. */
const ENV: Record<string, string> = {
  NETWORK_DRIVER: 'radius-sql',
  BILLING_SCHEDULER_ENABLED: 'false',
  BILLING_RUN_BATCH_SIZE: String(BATCH_SIZE),
  BILLING_RUN_LEASE_MS: '3000',
  AUTOMATION_ENABLED: 'false',
  PROVISIONING_POLL_MS: '50',
  PROVISIONING_LEASE_MS: '4000',
  PROVISIONING_RETRY_DELAYS_S: '0.2,0.2,0.2',
  WEBHOOK_ALLOW_PRIVATE: 'true',
  WEBHOOK_ALLOW_INSECURE: 'true',
  WEBHOOK_POLL_MS: '100',
  WEBHOOK_TIMEOUT_MS: '1000',
  // The receiver never fails: a retry is only ever for deliveries other suites left pending in a shared database
  // (to addresses long gone, each attempt up to WEBHOOK_TIMEOUT_MS), which this parks after one attempt instead of a
  // churn that starves ours; many at once get through them sooner.
  WEBHOOK_RETRY_DELAYS_S: '600',
  WEBHOOK_CONCURRENCY: '20',
};

type Data = Record<string, unknown>;
type Stream = 'subscriber' | 'payment' | 'allocation' | 'service' | 'suspend' | 'run';

/** One request of the burst and what it got: a status, or null when the connection died without an answer. */
interface Sent {
  stream: Stream;
  path: string;
  body: Data;
  key: string;
  status: number | null;
  data: Data | null;
  /** Why there was no answer. */
  error: string | null;
}

interface Answer {
  status: number | null;
  data: Data | null;
  code: string | null;
  replayed: boolean;
  error: string | null;
}

interface Service {
  id: string;
  subscriber_id: string;
  status: string;
  pppoe_username: string;
  radius_username: string;
}
interface Allocation {
  id: string;
  invoice_id: string | null;
  amount: number;
}
interface Invoice {
  id: string;
  number: number;
  subscriber_id: string;
  status: string;
  total: number;
  amount_paid: number;
  amount_due: number;
  allocations: Allocation[];
}
interface Transaction {
  id: string;
  subscriber_id: string;
  kind: string;
  amount: number;
  reference: string | null;
  allocated_amount: number;
  unallocated_amount: number;
  refunded_amount: number;
  allocations: Allocation[];
}
interface LedgerEntry {
  amount: number;
  balance_after: number;
  currency: string;
}
interface Event {
  id: string;
  type: string;
  subject_id: string | null;
}
interface BillingRun {
  id: string;
  status: string;
  subscribers_due: number;
  subscribers_billed: number;
  invoices_created: number;
  errors: unknown[];
}

const is2xx = (status: number | null) => status !== null && status >= 200 && status < 300;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const secret = () => `pw-${randomBytes(8).toString('hex')}`;

/** One POST with an idempotency key; a connection that dies is an answer too (status null). */
async function post(url: string, token: string, path: string, body: Data, key: string): Promise<Answer> {
  try {
    const res = await request(url)
      .post(path)
      .set(bearer(token))
      .set('Idempotency-Key', key)
      .timeout(60_000)
      .send(body);
    return {
      status: res.status,
      data: (res.body?.data ?? null) as Data | null,
      code: (res.body?.error?.code ?? null) as string | null,
      replayed: res.headers['idempotent-replayed'] === 'true',
      error: null,
    };
  } catch (error) {
    return { status: null, data: null, code: null, replayed: false, error: (error as Error).message };
  }
}

async function get<T>(url: string, token: string, path: string): Promise<T> {
  const res = await request(url).get(path).set(bearer(token));
  if (res.status !== 200) {
    throw new Error(`GET ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  }
  return res.body.data as T;
}

/** A setup POST that must succeed with `status`. */
async function must(url: string, token: string, path: string, body: Data, status = 201): Promise<Data> {
  const res = await request(url).post(path).set(bearer(token)).send(body);
  if (res.status !== status) {
    throw new Error(`POST ${path}: expected ${status}, got ${res.status} ${JSON.stringify(res.body)}`);
  }
  return res.body.data as Data;
}

/** `items` through `work`, `parallel` at a time. */
async function inParallel<T, R>(items: T[], parallel: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(parallel, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await work(items[i]);
      }
    }),
  );
  return out;
}

const sorted = (values: string[]) => [...values].sort();
const sum = (values: number[]) => values.reduce((total, value) => total + value, 0);

/** The burst's requests, and the streams that send them until the kill. */
class Burst {
  readonly sent: Sent[] = [];
  stopped = false;

  constructor(
    private readonly url: string,
    private readonly token: string,
  ) {}

  async send(stream: Stream, path: string, body: Data, key: string): Promise<Sent> {
    const answer = await post(this.url, this.token, path, body, key);
    const sent: Sent = {
      stream,
      path,
      body,
      key,
      status: answer.status,
      data: answer.data,
      error: answer.error,
    };
    this.sent.push(sent);
    return sent;
  }

  /** Runs `step(i)` for i = 0, 1, … with `parallel` in flight, until the kill (or `cap` steps). */
  async stream(cap: number, parallel: number, step: (i: number) => Promise<void>): Promise<void> {
    let next = 0;
    await Promise.all(
      Array.from({ length: parallel }, async () => {
        while (!this.stopped && next < cap) {
          await step(next++);
        }
      }),
    );
  }

  ok(stream: Stream): Sent[] {
    return this.sent.filter((sent) => sent.stream === stream && is2xx(sent.status));
  }
}

/** Everything the suite made before the burst. */
interface World {
  slug: string;
  tenantId: string;
  token: string;
  webhookId: string;
  webhookSecret: string;
  planId: string;
  billedIds: string[];
  networkIds: string[];
  /** The network subscribers' active services (suspended in the burst). */
  suspendable: Service[];
  /** Two open invoices per network subscriber (paid in the burst). */
  invoiceIds: string[];
  passwords: Map<string, string>;
  /** Events that existed before the subscription: not owed to it. */
  eventsBefore: Set<string>;
}

/** Tenant `slug` (the holds of the first process name it) with everything the burst works on. */
async function buildWorld(url: string, slug: string, receiver: WebhookReceiver): Promise<World> {
  const { tenantId, token } = await createTenantWithToken(url, ['admin'], slug);
  recordSecrets(token);
  const events = await listAllAt<Event>(url, token, '/api/v1/events');
  const webhook = await must(url, token, '/api/v1/webhooks', { url: receiver.url, events: ['*'] });
  recordSecrets(webhook.secret as string);

  await must(url, token, '/api/v1/billing-profiles', {
    name: 'Monthly on the 1st',
    currency: 'EUR',
    billing_day: 1,
    payment_terms_days: 14,
    auto_suspend_after_days: null,
    is_default: true,
  });
  const mid = await must(url, token, '/api/v1/billing-profiles', {
    name: 'Monthly on the 15th',
    currency: 'EUR',
    billing_day: 15,
    payment_terms_days: 14,
    auto_suspend_after_days: null,
    is_default: false,
  });
  const planId = (await must(url, token, '/api/v1/service-plans', PLAN)).id as string;
  const passwords = new Map<string, string>();
  const order = async (subscriberId: string, username: string) => {
    const password = secret();
    recordSecrets(password);
    passwords.set(username, password);
    const created = await must(
      url,
      token,
      `/api/v1/subscribers/${subscriberId}/services`,
      { plan_id: planId, pppoe_username: username, pppoe_password: password },
      202,
    );
    return created.service as Service;
  };

  const billedIds = (
    await inParallel([...Array(BILLED).keys()], 4, (i) =>
      must(url, token, '/api/v1/subscribers', { full_name: `Billed ${i}`, status: 'active' }),
    )
  ).map((subscriber) => subscriber.id as string);
  await inParallel(billedIds, 4, (id) => order(id, `billed${billedIds.indexOf(id)}`));
  const networkIds = (
    await inParallel([...Array(NETWORK_SUBSCRIBERS).keys()], 4, (i) =>
      must(url, token, '/api/v1/subscribers', {
        full_name: `Network ${i}`,
        status: 'active',
        billing_profile_id: mid.id,
      }),
    )
  ).map((subscriber) => subscriber.id as string);
  const suspendable = await inParallel(networkIds, 4, (id) => order(id, `line${networkIds.indexOf(id)}`));
  const invoiceIds = (
    await inParallel([...networkIds, ...networkIds], 4, (id) =>
      must(url, token, '/api/v1/invoices', {
        subscriber_id: id,
        currency: 'EUR',
        due_date: '2099-12-31',
        lines: [{ description: 'Installation', quantity: 1, unit_amount: INVOICE_TOTAL }],
      }),
    )
  ).map((invoice) => invoice.id as string);
  await waitFor(
    async () => {
      const active = await listAllAt<Service>(url, token, '/api/v1/services', { status: 'active' });
      return active.length === BILLED + NETWORK_SUBSCRIBERS ? true : undefined;
    },
    { timeout: 60_000, interval: 50, what: 'every service of the setup active' },
  );
  // The webhook worker has reached this tenant's deliveries: past whatever other suites left pending in a shared
  // database (tried once and parked, see ENV), which would otherwise take the burst's place.
  await receiver.waitFor(1, 120_000).catch((error: Error) => {
    throw new Error(
      `${error.message}: the webhook worker is still busy with deliveries other suites left pending in the ` +
        'database (they come first, in due order); they should delete their webhooks when done',
    );
  });
  return {
    slug,
    tenantId,
    token,
    webhookId: webhook.id as string,
    webhookSecret: webhook.secret as string,
    planId,
    billedIds,
    networkIds,
    suspendable,
    invoiceIds,
    passwords,
    eventsBefore: new Set(events.map((event) => event.id)),
  };
}

/** The streams of the burst, all at once, until `burst.stopped`. */
function startBurst(burst: Burst, world: World): Promise<void> {
  const run = burst.send('run', '/api/v1/billing-runs', { as_of: AS_OF }, 'run').then(() => undefined);
  const subscribers = burst.stream(STREAM_CAP, PARALLEL, async (i) => {
    await burst.send(
      'subscriber',
      '/api/v1/subscribers',
      { full_name: `Burst ${i}`, status: 'prospect' },
      `sub-${i}`,
    );
  });
  const payments = burst.stream(STREAM_CAP, PARALLEL, async (i) => {
    const payment = await burst.send(
      'payment',
      '/api/v1/transactions',
      {
        subscriber_id: world.networkIds[i % world.networkIds.length],
        kind: 'payment',
        source: 'external',
        amount: PAYMENT,
        currency: 'EUR',
        reference: `pay-${i}`,
        // Held for the allocation that follows it (a payment is otherwise applied on receipt, issue 28 item 3).
        auto_apply: false,
      },
      `pay-${i}`,
    );
    if (is2xx(payment.status) && !burst.stopped) {
      // Invoice i % 12 belongs to network subscriber i % 6, as the payment does.
      const invoiceId = world.invoiceIds[i % world.invoiceIds.length];
      await burst.send(
        'allocation',
        `/api/v1/transactions/${payment.data!.id as string}/allocate`,
        { allocations: [{ invoice_id: invoiceId, amount: ALLOCATION }] },
        `alloc-${i}`,
      );
    }
  });
  const services = burst.stream(STREAM_CAP, PARALLEL, async (i) => {
    const username = `burst${i}`;
    const password = secret();
    recordSecrets(password);
    world.passwords.set(username, password);
    await burst.send(
      'service',
      `/api/v1/subscribers/${world.networkIds[i % world.networkIds.length]}/services`,
      { plan_id: world.planId, pppoe_username: username, pppoe_password: password },
      `svc-${i}`,
    );
  });
  // One at a time and spaced, so suspensions are still being ordered and carried out when the kill comes.
  const suspensions = burst.stream(world.suspendable.length, 1, async (i) => {
    await burst.send(
      'suspend',
      `/api/v1/services/${world.suspendable[i].id}/actions`,
      { action: 'suspend', reason: 'crash suite' },
      `suspend-${i}`,
    );
    await sleep(100);
  });
  return Promise.all([run, subscribers, payments, services, suspensions]).then(() => undefined);
}

/** The rows one application of the service's last order leaves (docs/network.md). */
function expectedRows(service: Service, password: string | undefined) {
  return expectedRadiusLines(
    service.status === 'suspended' ? 'suspended' : 'active',
    password,
    PLAN,
    service.radius_username.split('/')[0],
  );
}

/** The ids a 2xx answer of a stream names (the record it made, and its order for a service). */
function idsOf(sent: { stream: Stream; data: Data | null }): string[] {
  const data = sent.data ?? {};
  switch (sent.stream) {
    case 'service':
      return [(data.service as Data).id as string, (data.order as Data).id as string];
    case 'allocation':
      return ((data.allocations as Allocation[]) ?? []).map((allocation) => allocation.id);
    case 'subscriber':
    case 'payment':
    case 'suspend':
    case 'run':
      return [data.id as string];
  }
}

interface StateAtKill {
  /** The tenant's events. */
  events: string[];
  /** Events whose delivery to the subscription was still pending. */
  owed: string[];
  orders: { id: string; status: string }[];
  runs: { status: string; subscribers_billed: number; subscribers_due: number }[];
  billed: string[];
}

/** The state the crash left, read while no server runs. */
async function readStateAtKill(db: CrashDatabase, world: World): Promise<StateAtKill> {
  const open = await openDatabase(db);
  try {
    const ids = async (sql: string, params: unknown[]) =>
      (await queryAt<{ id: string }>(open.url, sql, params)).map((row) => row.id);
    return {
      events: await ids('SELECT id FROM events WHERE tenant_id = $1', [world.tenantId]),
      owed: await ids(
        "SELECT event_id AS id FROM webhook_deliveries WHERE tenant_id = $1 AND webhook_id = $2 AND status = 'pending'",
        [world.tenantId, world.webhookId],
      ),
      orders: await queryAt(open.url, 'SELECT id, status FROM provisioning_orders WHERE tenant_id = $1', [
        world.tenantId,
      ]),
      runs: (
        await queryAt<{ status: string; subscribers_billed: number; subscribers_due: number }>(
          open.url,
          'SELECT status, subscribers_billed, subscribers_due FROM billing_runs WHERE tenant_id = $1',
          [world.tenantId],
        )
      ).map((run) => ({ ...run, subscribers_billed: Number(run.subscribers_billed) })),
      billed: await ids(
        'SELECT subscriber_id AS id FROM billing_periods WHERE tenant_id = $1 AND period_start = $2',
        [world.tenantId, AS_OF],
      ),
    };
  } finally {
    await open.close();
  }
}

/** Every 2xx answer of the burst names records that are there: a GET of each answers 200 (failures listed). */
async function missingRecords(url: string, token: string, answered: Sent[]): Promise<string[]> {
  const missing: string[] = [];
  await inParallel(answered, 4, async (sent) => {
    const [id, orderId] = idsOf(sent);
    const paths: Record<Stream, string[]> = {
      subscriber: [`/api/v1/subscribers/${id}`],
      payment: [`/api/v1/transactions/${id}`],
      allocation: [sent.path.replace(/\/allocate$/, '')],
      service: [`/api/v1/services/${id}`, `/api/v1/provisioning-orders/${orderId}`],
      suspend: [`/api/v1/provisioning-orders/${id}`],
      run: [`/api/v1/billing-runs/${id}`],
    };
    for (const path of paths[sent.stream]) {
      const res = await request(url).get(path).set(bearer(token));
      if (res.status !== 200) {
        missing.push(`${sent.key}: GET ${path} answered ${res.status}`);
      }
    }
    if (sent.stream === 'allocation') {
      const txn = await get<Transaction>(url, token, sent.path.replace(/\/allocate$/, ''));
      const there = new Set(txn.allocations.map((allocation) => allocation.id));
      missing.push(
        ...idsOf(sent)
          .filter((allocationId) => !there.has(allocationId))
          .map((a) => `${sent.key}: ${a}`),
      );
    }
  });
  return missing;
}

/** Balance problems of `subscriberIds`: the ledger's running sum, the balance endpoint and what invoices and payments make. */
async function balanceProblems(
  url: string,
  token: string,
  subscriberIds: string[],
  invoices: Invoice[],
  transactions: Transaction[],
): Promise<string[]> {
  const problems: string[] = [];
  await inParallel(subscriberIds, 4, async (subscriberId) => {
    const ledger = (
      await listAllAt<LedgerEntry>(url, token, `/api/v1/subscribers/${subscriberId}/ledger`)
    ).reverse();
    let running = 0;
    for (const entry of ledger) {
      running += entry.amount;
      if (entry.balance_after !== running) {
        problems.push(`${subscriberId}: ledger balance_after ${entry.balance_after}, running sum ${running}`);
      }
    }
    const balance = await get<{ balances: { currency: string; balance: number }[] }>(
      url,
      token,
      `/api/v1/subscribers/${subscriberId}/balance`,
    );
    const reported = balance.balances.find((row) => row.currency === 'EUR')?.balance ?? 0;
    const owed =
      sum(
        invoices
          .filter(
            (invoice) =>
              invoice.subscriber_id === subscriberId && !['draft', 'void'].includes(invoice.status),
          )
          .map((invoice) => invoice.total),
      ) - sum(transactions.filter((txn) => txn.subscriber_id === subscriberId).map((txn) => txn.amount));
    if (reported !== running || reported !== owed) {
      problems.push(
        `${subscriberId}: balance ${reported}, ledger sum ${running}, invoices less payments ${owed}`,
      );
    }
  });
  return problems;
}

interface Figures {
  database: string;
  sent: number;
  ok: number;
  noAnswer: number;
  events: number;
  delivered: number;
  owedAtKill: number;
  redelivered: number;
  orders: number;
  openAtKill: number;
  invoices: number;
  billedAtKill: number;
  seconds: number;
  /** How long each phase took. */
  phases: string[];
}

async function crashScenario(database: string, db: CrashDatabase): Promise<Figures> {
  const startedAt = Date.now();
  const phases: string[] = [];
  let lapStart = startedAt;
  const lap = (phase: string) => {
    phases.push(`${phase} ${((Date.now() - lapStart) / 1000).toFixed(1)} s`);
    lapStart = Date.now();
  };
  const slug = uniqueSlug('crash');
  const servers: CrashServer[] = [];
  const receiver = await WebhookReceiver.start({ fallback: SLOW_REPLY });
  let token: string | undefined;
  /** Server `n` on the data, its orders and batches of this tenant held so long after their write. */
  const start = async (n: number, holds: { orderMs: number; batchMs: number }) => {
    const server = await startCrashServer(db, `crash-${database}-${n}`, {
      ...ENV,
      TEST_PROVISIONING_HOLD: `${holds.orderMs}:${slug}`,
      TEST_BILLING_RUN_HOLD: `${holds.batchMs}:${slug}`,
    });
    servers.push(server);
    return server;
  };
  try {
    // 1. The first process, holding this tenant's bill-run batches and orders; the world the burst works on.
    const first = await start(1, { orderMs: ORDER_HOLD_MS, batchMs: BATCH_HOLD_MS });
    lap('first start');
    const world = await buildWorld(first.url, slug, receiver);
    lap('setup');
    token = world.token;

    // 2. The burst; the kill inside a bill-run batch once every stream has had its 2xx answers.
    const burst = new Burst(first.url, world.token);
    const burstOrders = () =>
      new Set([
        ...burst.ok('service').map((sent) => idsOf(sent)[1]),
        ...burst.ok('suspend').map((s) => idsOf(s)[0]),
      ]);
    const missing = () => [
      ...Object.entries(OK_BEFORE_KILL)
        .filter(([stream, n]) => burst.ok(stream as Stream).length < n)
        .map(([stream, n]) => `${n} 2xx ${stream}`),
      ...(receiver.requests.length < 5 ? ['5 webhook requests'] : []),
      ...(first.applied().some((id) => burstOrders().has(id)) ? [] : ['an order of the burst applied']),
    ];
    const burstDone = startBurst(burst, world);
    const killedIn = await killInBatch(first, BATCHES_BEFORE_KILL, { missing, timeoutMs: 60_000 }).finally(
      () => (burst.stopped = true),
    );
    expect(await first.exited).toBe('SIGKILL');
    await burstDone;
    lap('burst until the kill');
    receiver.setFallback(200);
    const answered = burst.sent.filter((sent) => is2xx(sent.status));
    const unanswered = burst.sent.filter((sent) => sent.status === null);

    // 3. What the crash left: the run mid-flight (the held batch's writes gone), orders open, deliveries owed.
    const atKill = await readStateAtKill(db, world);
    lap('state at the kill');
    expect(atKill.runs).toEqual([
      { status: 'running', subscribers_billed: atKill.billed.length, subscribers_due: BILLED },
    ]);
    expect(atKill.billed.length).toBeGreaterThanOrEqual(BATCHES_BEFORE_KILL * BATCH_SIZE);
    expect(atKill.billed.length).toBeLessThan(BILLED);
    expect(atKill.billed.filter((id) => killedIn.includes(id))).toEqual([]);
    const openAtKill = atKill.orders.filter((order) => order.status !== 'completed').map((order) => order.id);
    const completedAtKill = atKill.orders
      .filter((order) => order.status === 'completed')
      .map((order) => order.id);
    expect(openAtKill.length).toBeGreaterThan(0);
    expect(atKill.owed.length).toBeGreaterThan(0);
    expect(unanswered.length).toBeGreaterThan(0);

    // 4. Restarted on the same data, unheld (its applies and batches still traced).
    const restartedAt = Date.now();
    const second = await start(2, { orderMs: 0, batchMs: 0 });
    lap('restart');

    // 5. Every answered request, sent again with its key, replays its answer; every unanswered one ends with one
    // effect (a fresh one, or the replay of what committed before the kill).
    const again = await inParallel([...answered, ...unanswered], 4, async (sent) => ({
      sent,
      answer: await post(second.url, world.token, sent.path, sent.body, sent.key),
    }));
    const badReplays = again.filter(
      ({ sent, answer }) =>
        is2xx(sent.status) &&
        !(answer.replayed && answer.status === sent.status && isDeepStrictEqual(answer.data, sent.data)),
    );
    expect(
      badReplays.map(({ sent, answer }) => ({
        key: sent.key,
        first: { status: sent.status, data: sent.data },
        again: { status: answer.status, replayed: answer.replayed, data: answer.data },
      })),
    ).toEqual([]);
    const resent = again.filter(({ sent }) => sent.status === null);
    const badResends = resent.filter(
      ({ sent, answer }) =>
        !is2xx(answer.status) &&
        !(sent.stream === 'allocation' && answer.code === 'allocation_exceeds_amount_due'),
    );
    expect(
      badResends.map(({ sent, answer }) => ({ key: sent.key, status: answer.status, code: answer.code })),
    ).toEqual([]);
    /** The answer each key ended with: its 2xx before the kill, or what sending it again answered. */
    const final = new Map<string, Sent>(answered.map((sent) => [sent.key, sent]));
    for (const { sent, answer } of resent) {
      if (is2xx(answer.status)) {
        final.set(sent.key, { ...sent, status: answer.status, data: answer.data });
      }
    }
    const finals = (stream: Stream) => [...final.values()].filter((sent) => sent.stream === stream);

    // 6. The restarted process finishes the run, every order and every delivery.
    const runId = idsOf(burst.ok('run')[0])[0];
    const run = await waitFor(
      async () => {
        const seen = await get<BillingRun>(second.url, world.token, `/api/v1/billing-runs/${runId}`);
        return seen.status === 'running' ? undefined : seen;
      },
      { timeout: 60_000, interval: 50, what: `bill run ${runId} ended` },
    );
    const orders = await waitFor(
      async () => {
        const all = await listAllAt<Order>(second.url, world.token, '/api/v1/provisioning-orders');
        return all.every((order) => ['completed', 'failed', 'cancelled'].includes(order.status))
          ? all
          : undefined;
      },
      { timeout: 60_000, interval: 50, what: 'every order ended' },
    );
    const events = await listAllAt<Event>(second.url, world.token, '/api/v1/events');
    const eventIds = new Set(events.map((event) => event.id));
    expect(atKill.events.filter((id) => !eventIds.has(id))).toEqual([]);
    const owed = events.filter((event) => !world.eventsBefore.has(event.id)).map((event) => event.id);
    const stillOwed = () => owed.filter((id) => !receiver.answeredEventIds().has(id));
    await waitFor(() => Promise.resolve(stillOwed().length === 0 ? true : undefined), {
      timeout: 60_000,
      interval: 50,
      what: 'every event answered by the receiver',
    }).catch((error: Error) => {
      throw new Error(`${error.message}; still owed: ${JSON.stringify(stillOwed().slice(0, 20))}`);
    });

    lap('resend and settle');

    // 7a. Every 2xx before the kill is there, and each key made exactly one record.
    expect(await missingRecords(second.url, world.token, answered)).toEqual([]);
    const subscribers = await listAllAt<{ id: string; full_name: string }>(
      second.url,
      world.token,
      '/api/v1/subscribers',
    );
    const burstSubscribers = subscribers.filter((subscriber) => subscriber.full_name.startsWith('Burst '));
    expect(repeats(burstSubscribers.map((subscriber) => subscriber.full_name))).toEqual({});
    expect(sorted(burstSubscribers.map((subscriber) => subscriber.id))).toEqual(
      sorted(finals('subscriber').map((sent) => idsOf(sent)[0])),
    );
    expect(finals('subscriber').length).toBe(
      burst.sent.filter((sent) => sent.stream === 'subscriber').length,
    );
    const transactions = await inParallel(
      await listAllAt<Transaction>(second.url, world.token, '/api/v1/transactions'),
      4,
      (txn) => get<Transaction>(second.url, world.token, `/api/v1/transactions/${txn.id}`),
    );
    expect(repeats(transactions.map((txn) => txn.reference ?? txn.id))).toEqual({});
    expect(sorted(transactions.map((txn) => txn.id))).toEqual(
      sorted(finals('payment').map((s) => idsOf(s)[0])),
    );
    const services = await listAllAt<Service>(second.url, world.token, '/api/v1/services');
    const burstServices = services.filter((service) => service.pppoe_username.startsWith('burst'));
    expect(repeats(burstServices.map((service) => service.pppoe_username))).toEqual({});
    expect(sorted(burstServices.map((service) => service.id))).toEqual(
      sorted(finals('service').map((sent) => idsOf(sent)[0])),
    );
    const suspendOrders = orders.filter((order) => order.action === 'suspend');
    expect(repeats(suspendOrders.map((order) => order.service_id))).toEqual({});
    expect(sorted(suspendOrders.map((order) => order.id))).toEqual(
      sorted(finals('suspend').map((s) => idsOf(s)[0])),
    );
    const runs = await listAllAt<BillingRun>(second.url, world.token, '/api/v1/billing-runs');
    expect(runs.map((each) => each.id)).toEqual([runId]);
    const allocationsByPayment = new Map<string, string[]>();
    for (const sent of finals('allocation')) {
      allocationsByPayment.set(sent.path.split('/')[4], idsOf(sent));
    }
    expect(
      transactions.map((txn) => ({ id: txn.id, allocations: sorted(txn.allocations.map((a) => a.id)) })),
    ).toEqual(
      transactions.map((txn) => ({
        id: txn.id,
        allocations: sorted(allocationsByPayment.get(txn.id) ?? []),
      })),
    );

    // 7b. No half-written change: money.
    const invoices = await inParallel(
      await listAllAt<Invoice>(second.url, world.token, '/api/v1/invoices'),
      4,
      (invoice) => get<Invoice>(second.url, world.token, `/api/v1/invoices/${invoice.id}`),
    );
    expect(
      invoices.filter(
        (invoice) =>
          invoice.amount_paid !== sum(invoice.allocations.map((a) => a.amount)) ||
          invoice.amount_paid + invoice.amount_due !== invoice.total,
      ),
    ).toEqual([]);
    expect(
      transactions.filter(
        (txn) =>
          txn.allocated_amount !== sum(txn.allocations.map((a) => a.amount)) ||
          txn.allocated_amount > txn.amount ||
          txn.allocated_amount + txn.unallocated_amount + txn.refunded_amount !== txn.amount,
      ),
    ).toEqual([]);
    expect(sorted(invoices.flatMap((invoice) => invoice.allocations.map((a) => a.id)))).toEqual(
      sorted(transactions.flatMap((txn) => txn.allocations.map((a) => a.id))),
    );
    expect(
      await balanceProblems(
        second.url,
        world.token,
        [...world.networkIds, ...world.billedIds],
        invoices,
        transactions,
      ),
    ).toEqual([]);

    // 7c. No record without its event, none with two.
    const subjects = (type: string) =>
      sorted(events.filter((e) => e.type === type).map((e) => e.subject_id ?? ''));
    expect(subjects('subscriber.created')).toEqual(sorted(subscribers.map((subscriber) => subscriber.id)));
    expect(subjects('transaction.created')).toEqual(sorted(transactions.map((txn) => txn.id)));
    expect(subjects('transaction.allocated')).toEqual(
      sorted(transactions.filter((txn) => txn.allocations.length > 0).map((txn) => txn.id)),
    );
    expect(subjects('invoice.created')).toEqual(sorted(invoices.map((invoice) => invoice.id)));
    expect(subjects('service.created')).toEqual(sorted(services.map((service) => service.id)));
    expect(subjects('provisioning_order.created')).toEqual(sorted(orders.map((order) => order.id)));
    expect(subjects('provisioning_order.completed')).toEqual(sorted(orders.map((order) => order.id)));
    expect(subjects('provisioning_order.failed')).toEqual([]);
    expect(subjects('service.suspended')).toEqual(sorted(suspendOrders.map((order) => order.service_id)));
    expect(subjects('billing_run.completed')).toEqual([runId]);

    // 7d. Webhooks: every owed event answered (those owed at the kill after the restart), one webhook-id and one
    // signed body per event across redeliveries, nothing the tenant did not owe.
    const requests = receiver.requests;
    expect(
      requests.filter(
        (req) => req.body?.id !== req.headers['webhook-id'] || !verifies(world.webhookSecret, req),
      ),
    ).toEqual([]);
    const byEvent = new Map<string, ReceivedRequest[]>();
    for (const req of requests) {
      byEvent.set(req.body!.id, [...(byEvent.get(req.body!.id) ?? []), req]);
    }
    expect(
      [...byEvent.entries()].filter(([, reqs]) => new Set(reqs.map((req) => req.rawBody)).size !== 1),
    ).toEqual([]);
    expect([...byEvent.keys()].filter((id) => !owed.includes(id))).toEqual([]);
    const afterRestart = new Set(
      requests.filter((req) => req.receivedAt >= restartedAt && req.answered).map((req) => req.body!.id),
    );
    expect(atKill.owed.filter((id) => !afterRestart.has(id))).toEqual([]);

    // 7e. Every order completed exactly once: recorded once, never carried out again once recorded, every one
    // carried out, the RADIUS rows of one application.
    expect(orders.filter((order) => order.status !== 'completed')).toEqual([]);
    expect(orders.length).toBe(
      BILLED + NETWORK_SUBSCRIBERS + finals('service').length + finals('suspend').length,
    );
    const orderIds = new Set(orders.map((order) => order.id));
    const appliedAfter = second.applied().filter((id) => orderIds.has(id));
    expect(repeats(appliedAfter)).toEqual({});
    expect(appliedAfter.filter((id) => completedAtKill.includes(id))).toEqual([]);
    const appliedAtAll = new Set([...first.applied(), ...appliedAfter]);
    expect(orders.filter((order) => !appliedAtAll.has(order.id)).map((order) => order.id)).toEqual([]);

    // 7f. The run completed, every (subscriber, period) billed once.
    expect(run).toMatchObject({
      status: 'completed',
      subscribers_due: BILLED,
      subscribers_billed: BILLED,
      invoices_created: BILLED,
      errors: [],
    });
    const runInvoices = invoices.filter((invoice) => world.billedIds.includes(invoice.subscriber_id));
    expect(repeats(runInvoices.map((invoice) => invoice.subscriber_id))).toEqual({});
    expect(sorted(runInvoices.map((invoice) => invoice.subscriber_id))).toEqual(sorted(world.billedIds));
    expect(invoices).toHaveLength(BILLED + world.invoiceIds.length);
    expect(repeats(invoices.map((invoice) => String(invoice.number)))).toEqual({});

    // Every delivery of the subscription succeeded: one per owed event, none left pending or failed.
    const deliveries = await listAllAt<{ event_id: string; status: string }>(
      second.url,
      world.token,
      '/api/v1/webhook-deliveries',
      { webhook_id: world.webhookId },
    );
    expect(deliveries.filter((delivery) => delivery.status !== 'succeeded')).toEqual([]);
    expect(sorted(deliveries.map((delivery) => delivery.event_id))).toEqual(sorted(owed));

    // No request's answer was stored after its transaction (a crash there would leave its key stuck).
    for (const server of [first, second]) {
      expect(server.stdout() + server.stderr()).not.toContain('idempotent answer stored after the commit');
    }
    await deleteAllWebhooks(second.url, world.token);
    expect(await second.stop('SIGTERM')).toBe('0');
    lap('checks');

    // 8. Read from the database: the RADIUS rows and the billed periods.
    const open = await openDatabase(db);
    try {
      const rows = await radiusRowsAt(
        open.url,
        services.map((service) => service.radius_username),
      );
      expect(
        services
          .map((service) => ({
            username: service.radius_username,
            ...rows[service.radius_username],
          }))
          .filter((got) => {
            const service = services.find((s) => s.radius_username === got.username)!;
            return !isDeepStrictEqual(
              { check: got.check, reply: got.reply, groups: got.groups },
              expectedRows(service, world.passwords.get(service.pppoe_username)),
            );
          })
          .map((got) => got.username),
      ).toEqual([]);
      const periods = await queryAt<{ subscriber_id: string; invoice_id: string | null }>(
        open.url,
        'SELECT subscriber_id, invoice_id FROM billing_periods WHERE tenant_id = $1',
        [world.tenantId],
      );
      expect(sorted(periods.map((period) => `${period.subscriber_id} ${period.invoice_id}`))).toEqual(
        sorted(runInvoices.map((invoice) => `${invoice.subscriber_id} ${invoice.id}`)),
      );
    } finally {
      await open.close();
    }
    lap('database checks');

    return {
      database,
      sent: burst.sent.length,
      ok: answered.length,
      noAnswer: unanswered.length,
      events: owed.length,
      delivered: byEvent.size,
      owedAtKill: atKill.owed.length,
      redelivered: [...byEvent.values()].filter((reqs) => reqs.length > 1).length,
      orders: orders.length,
      openAtKill: openAtKill.length,
      invoices: runInvoices.length,
      billedAtKill: atKill.billed.length,
      seconds: Math.round((Date.now() - startedAt) / 100) / 10,
      phases,
    };
  } finally {
    const alive = servers.find((server) => server.running());
    if (alive && token) {
      // A failure midway: no delivery of this tenant is left for a later suite's server to try.
      await deleteAllWebhooks(alive.url, token).catch(() => undefined);
    }
    for (const server of servers) {
      await server.stop('SIGKILL');
    }
    await receiver.close();
  }
}

function summary(figures: Figures): string {
  return (
    `crash on ${figures.database}: ${figures.sent} requests sent, ${figures.ok} answered 2xx before the SIGKILL ` +
    `(${figures.noAnswer} left without an answer, sent again with their key), bill run killed mid-batch with ` +
    `${figures.billedAtKill}/${BILLED} billed; after the restart: ${figures.events} events, ${figures.delivered} ` +
    `delivered (${figures.owedAtKill} owed at the kill, ${figures.redelivered} delivered more than once), ` +
    `${figures.orders} orders completed once (${figures.openAtKill} open at the kill), ${figures.invoices} invoices ` +
    `(one per subscriber and period); lost: nothing; ${figures.seconds} s (${figures.phases.join(', ')})`
  );
}

/** Postgres: DATABASE_URL when it names a server, else a throw-away cluster of this suite's own. */
async function postgres(): Promise<{ db: CrashDatabase; cluster?: ThrowawayCluster }> {
  const url = process.env.DATABASE_URL;
  if (url && process.env.TEST_EMBEDDED_DATABASE !== 'true') {
    return { db: { kind: 'postgres', url } };
  }
  const cluster = await startThrowawayCluster(55_500 + randomInt(100));
  return { db: { kind: 'postgres', url: cluster.url }, cluster };
}

describe('A SIGKILL in the middle of a mixed burst, and a restart', () => {
  it(
    'should lose nothing, half-write nothing and do nothing twice on the embedded database in a data folder',
    async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'isp-crash-'));
      try {
        console.log(summary(await crashScenario('the embedded database', { kind: 'embedded', dataDir })));
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
      }
    },
    TIMEOUT_MS,
  );

  it(
    'should lose nothing, half-write nothing and do nothing twice on Postgres',
    async () => {
      const { db, cluster } = await postgres();
      try {
        console.log(summary(await crashScenario('Postgres', db)));
      } finally {
        await cluster?.stop();
      }
    },
    TIMEOUT_MS,
  );
});
