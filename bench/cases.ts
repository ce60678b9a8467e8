import type { BillingSeed } from './seed';
import type { DomainSeed } from './seed-domain';
import { SEED_CURRENCY } from './seed-sql';

export const BOOTSTRAP_TOKEN = 'isk_bench_0123456789abcdefghijklmnopqrstuvwxyz';

export interface NextRequest {
  path: string;
  body?: string;
  headers?: Record<string, string>;
}

export interface BenchCase {
  name: string;
  label: string;
  /** The process that serves it: the server under test, baseline (a) or baseline (c). */
  target: 'app' | 'baseline' | 'floor';
  method: 'GET' | 'POST';
  /** Kept by --quick. */
  quick: boolean;
  /** A fixed path, or a generator for requests that differ (unique bodies, keys, ids). */
  path?: string;
  next?: () => NextRequest;
  /** For the query count: its statements per request, and the table whose SELECT to EXPLAIN. */
  countQueries: boolean;
  explain?: 'subscribers' | 'events' | 'tickets' | 'provisioning_orders' | 'ledger_entries';
  /** Run after each measurement of the case, outside the window (e.g. until the work it queued is done). */
  settle?: () => Promise<void>;
}

export interface Fixtures {
  tenantId: string;
  getIds: string[];
  subscribersDeepCursor: string;
  eventsDeepCursor: string;
  billing: BillingSeed;
  domain: DomainSeed;
  /** Resolves once the provisioning worker has carried out every open order (after `services.create`). */
  provisioningSettled: () => Promise<void>;
}

/** What the cases' requests share: a tag unique to this run, a sequence number per request, a new subscriber. */
interface Requests {
  tag: string;
  /** The next sequence number (each request that differs takes one). */
  next(): number;
  /** The last sequence number taken. */
  current(): number;
  /** A new subscriber's body, unique to its request. */
  subscriberBody(): string;
}

function requestsOf(tag: string): Requests {
  let seq = 0;
  const requests: Requests = {
    tag,
    next: () => ++seq,
    current: () => seq,
    subscriberBody: () => {
      const n = requests.next();
      return JSON.stringify({
        external_id: `bench-${tag}-${n}`,
        full_name: `Bench Subscriber ${n}`,
        email: `bench-${tag}-${n}@example.net`,
        phone: '+14155550123',
        status: 'active',
        address: { line1: '1 Fiber Way', city: 'Springfield', state: 'IL', postal_code: '62701' },
        metadata: { plan: 'fiber-500' },
      });
    },
  };
  return requests;
}

/** Every case, in the order they run: the baselines, the writes, the reads, then money. */
export function buildCases(fixtures: Fixtures): BenchCase[] {
  const requests = requestsOf(Date.now().toString(36));
  return [
    ...baselineCases(requests),
    ...writeCases(fixtures, requests),
    ...subscriberReadCases(fixtures, requests),
    ...historyReadCases(fixtures, requests),
    ...moneyCases(fixtures, requests),
  ];
}

/** The baselines the server is measured against: a bare INSERT (a) and the framework floor (c). */
function baselineCases(requests: Requests): BenchCase[] {
  return [
    {
      name: 'baseline.insert',
      label: 'baseline (a): node:http + pg INSERT',
      target: 'baseline',
      method: 'POST',
      quick: true,
      countQueries: false,
      next: () => ({ path: '/', body: requests.subscriberBody() }),
    },
    {
      name: 'baseline.framework',
      label: 'baseline (c): Nest + Express + ValidationPipe + pg INSERT',
      target: 'floor',
      method: 'POST',
      quick: true,
      countQueries: false,
      next: () => ({ path: '/api/v1/subscribers', body: requests.subscriberBody() }),
    },
  ];
}

/** Creates: subscribers (with and without an idempotency key), tickets, services (with the work they queue). */
function writeCases(fixtures: Fixtures, requests: Requests): BenchCase[] {
  const { getIds, domain } = fixtures;
  return [
    {
      name: 'subscribers.create',
      label: 'POST /subscribers',
      target: 'app',
      method: 'POST',
      quick: true,
      countQueries: true,
      next: () => ({ path: '/api/v1/subscribers', body: requests.subscriberBody() }),
    },
    {
      name: 'subscribers.create_idempotent',
      label: 'POST /subscribers + X-Idempotency-Key',
      target: 'app',
      method: 'POST',
      quick: false,
      countQueries: true,
      next: () => ({
        path: '/api/v1/subscribers',
        body: requests.subscriberBody(),
        headers: { 'x-idempotency-key': `bench-${requests.tag}-${requests.current()}` },
      }),
    },
    {
      name: 'tickets.create',
      label: 'POST /tickets',
      target: 'app',
      method: 'POST',
      quick: false,
      countQueries: true,
      next: () => {
        const n = requests.next();
        return {
          path: '/api/v1/tickets',
          body: JSON.stringify({
            subject: `No internet since this morning (bench ${n})`,
            description: 'The ONT shows a red LOS light; the customer already restarted it twice.',
            type: 'incident',
            priority: 'high',
            subscriber_id: getIds[n % getIds.length],
            assignee: 'noc.jane',
            tags: ['fiber', 'outage'],
            metadata: { channel: 'phone' },
          }),
        };
      },
    },
    {
      // 202: the pending service and its activate order; the provisioning worker (NETWORK_DRIVER radius-sql, the
      // default) carries the orders out in the same process while the case runs, and the case waits for the last of
      // them after each measurement.
      name: 'services.create',
      label: 'POST /subscribers/{id}/services (202)',
      target: 'app',
      method: 'POST',
      quick: false,
      countQueries: true,
      settle: fixtures.provisioningSettled,
      next: () => {
        const n = requests.next();
        return {
          path: `/api/v1/subscribers/${getIds[n % getIds.length]}/services`,
          body: JSON.stringify({
            plan_id: domain.planId,
            pppoe_username: `bench-${requests.tag}-${n}`,
            pppoe_password: 'correct-horse-42',
            cpe_mac: 'AA-BB-CC-00-11-22',
            installation_address: '12 Fibre Lane, Springfield',
          }),
        };
      },
    },
  ];
}

/** The liveness probe and reads of subscribers: one record, the first page, a deep page. */
function subscriberReadCases(fixtures: Fixtures, requests: Requests): BenchCase[] {
  const { getIds } = fixtures;
  return [
    {
      name: 'health.live',
      label: 'GET /health/live (baseline b)',
      target: 'app',
      method: 'GET',
      quick: true,
      countQueries: true,
      path: '/health/live',
    },
    {
      name: 'subscribers.get',
      label: 'GET /subscribers/{id}',
      target: 'app',
      method: 'GET',
      quick: true,
      countQueries: true,
      explain: 'subscribers',
      next: () => ({ path: `/api/v1/subscribers/${getIds[requests.next() % getIds.length]}` }),
    },
    {
      name: 'subscribers.list_first',
      label: 'GET /subscribers?limit=100 (first page)',
      target: 'app',
      method: 'GET',
      quick: true,
      countQueries: true,
      explain: 'subscribers',
      path: '/api/v1/subscribers?limit=100',
    },
    {
      name: 'subscribers.list_deep',
      label: 'GET /subscribers?limit=100 (deep cursor)',
      target: 'app',
      method: 'GET',
      quick: true,
      countQueries: true,
      explain: 'subscribers',
      path: `/api/v1/subscribers?limit=100&starting_after=${fixtures.subscribersDeepCursor}`,
    },
    searchCase(requests),
  ];
}

/**
 * GET /subscribers?q= over the seeded subscribers ('Seed Subscriber <g>'), a different one per request, as a desk
 * types a name: `Subscriber 4711` matches 4711, 47110…47119 and 471100…471199 (up to 111), ranked, a page of 20.
 * Numbers up to 100,000, so every size of seed (--rows, --quick) holds them.
 */
function searchCase(requests: Requests): BenchCase {
  return {
    name: 'subscribers.search',
    label: 'GET /subscribers?q= (ranked search, trigram index)',
    target: 'app',
    method: 'GET',
    quick: true,
    countQueries: true,
    next: () => ({
      path: `/api/v1/subscribers?limit=20&q=${encodeURIComponent(`Subscriber ${((requests.next() * 7919) % 99_000) + 1000}`)}`,
    }),
  };
}

/** Reads of what accumulates: events (pages, by subject), tickets, provisioning orders, a ledger. */
function historyReadCases(fixtures: Fixtures, requests: Requests): BenchCase[] {
  const history = fixtures.domain.historySubscriberIds;
  return [
    {
      name: 'events.list_first',
      label: 'GET /events?limit=100 (first page)',
      target: 'app',
      method: 'GET',
      quick: false,
      countQueries: true,
      explain: 'events',
      path: '/api/v1/events?limit=100',
    },
    {
      name: 'events.list_deep',
      label: 'GET /events?limit=100 (deep cursor)',
      target: 'app',
      method: 'GET',
      quick: false,
      countQueries: true,
      explain: 'events',
      path: `/api/v1/events?limit=100&starting_after=${fixtures.eventsDeepCursor}`,
    },
    {
      name: 'events.by_subject',
      label: 'GET /events?subject_id=…&limit=100',
      target: 'app',
      method: 'GET',
      quick: false,
      countQueries: true,
      explain: 'events',
      next: () => ({
        path: `/api/v1/events?subject_id=${history[requests.next() % history.length]}&limit=100`,
      }),
    },
    {
      name: 'tickets.list',
      label: 'GET /tickets?limit=100',
      target: 'app',
      method: 'GET',
      quick: false,
      countQueries: true,
      explain: 'tickets',
      path: '/api/v1/tickets?limit=100',
    },
    {
      name: 'provisioning_orders.list',
      label: 'GET /provisioning-orders?limit=100',
      target: 'app',
      method: 'GET',
      quick: false,
      countQueries: true,
      explain: 'provisioning_orders',
      path: '/api/v1/provisioning-orders?limit=100',
    },
    {
      name: 'ledger.list',
      label: 'GET /subscribers/{id}/ledger?limit=100',
      target: 'app',
      method: 'GET',
      quick: false,
      countQueries: true,
      explain: 'ledger_entries',
      next: () => ({
        path: `/api/v1/subscribers/${history[requests.next() % history.length]}/ledger?limit=100`,
      }),
    },
  ];
}

/** Money: a payment recorded, an allocation made. */
function moneyCases(fixtures: Fixtures, requests: Requests): BenchCase[] {
  const { getIds, billing } = fixtures;
  return [
    {
      name: 'transactions.create',
      label: 'POST /transactions (payment)',
      target: 'app',
      method: 'POST',
      quick: false,
      countQueries: true,
      next: () => {
        const n = requests.next();
        return {
          path: '/api/v1/transactions',
          body: JSON.stringify({
            subscriber_id: getIds[n % getIds.length],
            kind: 'payment',
            source: 'external',
            amount: 4999,
            currency: SEED_CURRENCY,
            external_id: `bench-${requests.tag}-${n}`,
            method: 'card',
          }),
        };
      },
    },
    {
      name: 'transactions.allocate',
      label: 'POST /transactions/{id}/allocate',
      target: 'app',
      method: 'POST',
      quick: false,
      countQueries: true,
      next: () => {
        const pair = billing.pairs[requests.next() % billing.pairs.length];
        return {
          path: `/api/v1/transactions/${pair.transactionId}/allocate`,
          body: JSON.stringify({ allocations: [{ invoice_id: pair.invoiceId, amount: 1 }] }),
        };
      },
    },
  ];
}
