import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import request, { type Response } from 'supertest';
import { invoiceBody, transactionBody } from '../support/billing-factory';
import {
  addDays,
  type BillingRun,
  createActiveService,
  createCustomer,
  createEurPlan,
  createProfile,
  createBilledSubscriber,
  type Customer,
  invoicesOf,
  postRun,
  type RunApp,
  runToCompletion,
  startRunApp,
  waitForRun,
} from '../support/billing-run-factory';
import { expectList, expectSuccess } from '../support/envelope';
import { bearer } from '../support/factories';
import type { Usage } from '../support/network-factory';
import { createService } from '../support/provisioning-factory';
import { type ServerChild, startSuiteServer } from '../support/server-process';
import { createSubscriber } from '../support/subscriber-factory';
import { createTicket } from '../support/ticket-factory';
import { createWebhook, deleteAllWebhooks } from '../support/webhook-receiver';
import { createTenantWithToken, type TestApp, uniqueSlug } from '../support/test-app';

/** Outside years 1900–9999 (or past them once in UTC), in every spelling a client might send. */
const OUT_OF_RANGE_DAYS = ['0000-01-01', '0001-01-01', '1899-12-31', '10000-01-01', '+010000-01-01'];
const YEAR_10000_TIMESTAMPS = [
  '10000-01-01T00:00:00Z',
  '+010000-01-01T00:00:00.000Z',
  '9999-12-31T23:00:00-05:00',
];
const OUT_OF_RANGE_TIMESTAMPS = [
  ...OUT_OF_RANGE_DAYS,
  '0000-01-01T00:00:00Z',
  '0001-01-01T00:00:00Z',
  '1899-12-31T23:59:59.999Z',
  ...YEAR_10000_TIMESTAMPS,
];
const DAY_BOUNDS = ['1900-01-01', '9999-12-31'];
const TIMESTAMP_BOUNDS = [...DAY_BOUNDS, '1900-01-01T00:00:00.000Z', '9999-12-31T23:59:59.999Z'];

type Kind = 'day' | 'timestamp';

/** Every date the API accepts: `METHOD /path in:name` (as openapi.json names it) and which rule it follows. */
const LIST_PATHS = [
  '/api/v1/billing-profiles',
  '/api/v1/billing-runs',
  '/api/v1/billing-runs/{id}/items',
  '/api/v1/credit-notes',
  '/api/v1/events',
  '/api/v1/imports',
  '/api/v1/imports/{id}/errors',
  '/api/v1/invoices',
  '/api/v1/ip-pools',
  '/api/v1/nas',
  '/api/v1/notifications',
  '/api/v1/provisioning-orders',
  '/api/v1/service-plans',
  '/api/v1/services',
  '/api/v1/services/{id}/sessions',
  '/api/v1/subscribers',
  '/api/v1/subscribers/{id}/charges',
  '/api/v1/subscribers/{id}/ledger',
  '/api/v1/subscribers/{id}/services',
  '/api/v1/subscribers/{id}/tickets',
  '/api/v1/tax-rates',
  '/api/v1/tenants',
  '/api/v1/test-clocks',
  '/api/v1/tickets',
  '/api/v1/tickets/{id}/comments',
  '/api/v1/tokens',
  '/api/v1/transactions',
  '/api/v1/webhook-deliveries',
  '/api/v1/webhooks',
  '/api/v1/webhooks/{id}/deliveries',
];
/** Issue 32: the CSV exports take their lists' filters; the reports name a period or a day. */
const EXPORT_PATHS = [
  '/api/v1/exports/invoices.csv',
  '/api/v1/exports/ledger.csv',
  '/api/v1/exports/subscribers.csv',
  '/api/v1/exports/transactions.csv',
];
const PERIOD_REPORTS = ['/api/v1/reports/churn', '/api/v1/reports/mrr', '/api/v1/reports/revenue'];
const QUERY_DATES: { path: string; name: string; kind: Kind }[] = [
  ...LIST_PATHS.flatMap((path) =>
    ['created_gte', 'created_lt'].map((name): { path: string; name: string; kind: Kind } => ({
      path,
      name,
      kind: 'timestamp',
    })),
  ),
  { path: '/api/v1/transactions', name: 'occurred_gte', kind: 'timestamp' },
  { path: '/api/v1/transactions', name: 'occurred_lt', kind: 'timestamp' },
  { path: '/api/v1/services/{id}/usage', name: 'from', kind: 'day' },
  { path: '/api/v1/services/{id}/usage', name: 'to', kind: 'day' },
  { path: '/api/v1/subscribers/{id}/statement', name: 'from', kind: 'day' },
  { path: '/api/v1/subscribers/{id}/statement', name: 'to', kind: 'day' },
  { path: '/api/v1/subscribers/{id}/statement/pdf', name: 'from', kind: 'day' },
  { path: '/api/v1/subscribers/{id}/statement/pdf', name: 'to', kind: 'day' },
  { path: '/api/v1/reports/tax', name: 'from', kind: 'day' },
  { path: '/api/v1/reports/tax', name: 'to', kind: 'day' },
  ...EXPORT_PATHS.flatMap((path) =>
    ['created_gte', 'created_lt'].map((name): { path: string; name: string; kind: Kind } => ({
      path,
      name,
      kind: 'timestamp',
    })),
  ),
  { path: '/api/v1/exports/transactions.csv', name: 'occurred_gte', kind: 'timestamp' },
  { path: '/api/v1/exports/transactions.csv', name: 'occurred_lt', kind: 'timestamp' },
  ...PERIOD_REPORTS.flatMap((path) =>
    ['from', 'to'].map((name): { path: string; name: string; kind: Kind } => ({ path, name, kind: 'day' })),
  ),
  { path: '/api/v1/reports/receivables-aging', name: 'as_of', kind: 'day' },
];
const BODY_DATES: { path: string; name: string; kind: Kind }[] = [
  { path: '/api/v1/billing-runs', name: 'as_of', kind: 'day' },
  { path: '/api/v1/invoices', name: 'due_date', kind: 'day' },
  { path: '/api/v1/transactions', name: 'occurred_at', kind: 'timestamp' },
  { path: '/api/v1/tokens', name: 'expires_at', kind: 'timestamp' },
  { path: '/api/v1/test-clocks', name: 'frozen_time', kind: 'timestamp' },
  { path: '/api/v1/test-clocks/{id}/advance', name: 'to', kind: 'timestamp' },
];

/** A refusal in the failure envelope naming `field` (its other keys are another item's concern). */
function expectError(res: Response, status: number, code: string, field: string): void {
  expect({
    status: res.status,
    success: res.body?.success,
    code: res.body?.error?.code,
    field: res.body?.error?.field,
  }).toEqual({
    status,
    success: false,
    code,
    field,
  });
  expect(res.headers['x-request-id']).toBe(res.body.meta.request_id);
}

/** Parameters that are no date whatever format the document gives them: a cursor. */
const NOT_DATES = new Set(['starting_after']);

/** A name that says "date or time" (a cursor, `starting_after`, is not one). */
const DATE_NAME = /(_at|_on|_date|_gte|_lt|_lte|_gt|_before|_since|_until|^as_of|^from|^to|^since|^until)$/;

interface Schema {
  $ref?: string;
  format?: string;
  properties?: Record<string, Schema>;
  items?: Schema;
  allOf?: Schema[];
  oneOf?: Schema[];
  anyOf?: Schema[];
}

/** What the coverage check reads of an operation in openapi.json. */
interface Operation {
  responses?: unknown;
  parameters?: { in: string; name: string; schema?: Schema }[];
  requestBody?: { content?: Record<string, { schema?: Schema }> };
}

/** The date-like properties of a request body schema, nested ones by dotted path. */
function dateProperties(doc: { components: { schemas: Record<string, Schema> } }, schema?: Schema): string[] {
  const walk = (node: Schema | undefined, prefix: string, seen: Set<string>): string[] => {
    if (!node) {
      return [];
    }
    if (node.$ref) {
      const name = node.$ref.split('/').pop()!;
      return seen.has(name) ? [] : walk(doc.components.schemas[name], prefix, new Set([...seen, name]));
    }
    const found = [...(node.allOf ?? []), ...(node.oneOf ?? []), ...(node.anyOf ?? [])].flatMap((part) =>
      walk(part, prefix, seen),
    );
    for (const [key, property] of Object.entries(node.properties ?? {})) {
      const path = `${prefix}${key}`;
      if (DATE_NAME.test(key) || property.format === 'date' || property.format === 'date-time') {
        found.push(path);
      }
      found.push(...walk(property.items ?? (property.$ref ? property : undefined), `${path}.`, seen));
    }
    return found;
  };
  return walk(schema, '', new Set());
}

/**
 * Issue 27 items 1 and 2: every date and timestamp the API accepts is bounded to years 1900–9999 by one rule
 * (src/common/dates.ts, checked by IsDateOnly/IsTimestamp); beyond it a body answers 422 and a query 400, naming the
 * field. A usage range ending 9999-12-31 answers at once (it hung the server), and a bill run never computes a
 * period or due date past 9999-12-31.
 */
describe('Hardening: dates are bounded to years 1900–9999', () => {
  let run: RunApp;
  let t: TestApp;
  let customer: Customer;
  let token: string;
  let ids: Record<string, string>;

  const concrete = (path: string): string => {
    const owner = /^\/api\/v1\/([\w-]+)\/\{id\}/.exec(path)?.[1];
    return owner ? path.replace('{id}', ids[owner]) : path;
  };
  const tokenFor = (path: string) => (path === '/api/v1/tenants' ? t.adminToken : token);
  // The deliveries of all webhooks are listed one webhook at a time (webhook_id is required).
  // The tax report names its period (both days required): one of them is then tried.
  const required = (path: string): Record<string, string> => {
    if (path === '/api/v1/webhook-deliveries') {
      return { webhook_id: ids.webhooks };
    }
    if (path === '/api/v1/reports/tax' || PERIOD_REPORTS.includes(path)) {
      const period = { from: '2026-01-01', to: '2026-01-31' };
      return path === '/api/v1/reports/revenue' ? { ...period, group_by: 'month' } : period;
    }
    if (path === '/api/v1/reports/receivables-aging') {
      return { as_of: '2026-01-31' };
    }
    // The ledger export is one subscriber's.
    return path === '/api/v1/exports/ledger.csv' ? { subscriber_id: customer.subscriberId } : {};
  };
  const get = (path: string, query: Record<string, string>) =>
    request(t.http)
      .get(concrete(path))
      .query({ ...required(path), ...query })
      .set(bearer(tokenFor(path)));

  beforeAll(async () => {
    run = await startRunApp({
      WEBHOOK_WORKER_ENABLED: 'false',
      WEBHOOK_ALLOW_PRIVATE: 'true',
      LOG_LEVEL: 'error',
    });
    t = run.t;
    customer = await createCustomer(t);
    token = customer.tenant.token;
    const plan = await createEurPlan(t, token, 3100);
    const { service } = await createService(t, token, customer.subscriberId, { plan_id: plan.id });
    const ticket = await createTicket(t, token, { subscriber_id: customer.subscriberId });
    const webhook = await createWebhook(t.http, token, {
      url: 'https://hooks.example.net/isp',
      events: ['*'],
    });
    // A run whose items the items list's date filters are tried on (a dry run: it may look ahead, and bills nothing).
    const dryRun = await runToCompletion(t, token, { dry_run: true });
    // An import, whose errors list takes the lists' date filters too.
    const upload = await request(t.http)
      .post('/api/v1/imports?kind=subscribers')
      .set(bearer(token))
      .set('Content-Type', 'text/csv')
      .send('external_id,full_name\ndates-1,Dates Bound\n');
    expectSuccess(upload, 202);
    // A test clock, whose advance takes a timestamp.
    const clock = await request(t.http)
      .post('/api/v1/test-clocks')
      .set(bearer(token))
      .send({ name: 'dates', frozen_time: '2027-01-01T00:00:00.000Z' });
    expectSuccess(clock, 201);
    ids = {
      'test-clocks': clock.body.data.id as string,
      imports: upload.body.data.id as string,
      'billing-runs': dryRun.id,
      services: service.id,
      subscribers: customer.subscriberId,
      tickets: ticket.id,
      webhooks: webhook.id,
    };
  });
  afterAll(async () => {
    // Its webhook (events: *) would keep a later suite's delivery worker busy with callbacks nobody answers.
    if (token) {
      await deleteAllWebhooks(t.http, token);
    }
    await run?.close();
  });

  it('should cover every date openapi.json lets a request send', () => {
    const doc = JSON.parse(readFileSync(join(__dirname, '..', '..', 'openapi.json'), 'utf8'));
    const documented: string[] = [];
    for (const [path, operations] of Object.entries<Record<string, Operation>>(doc.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        if (!operation || typeof operation !== 'object' || !operation.responses) {
          continue;
        }
        for (const parameter of operation.parameters ?? []) {
          const format = parameter.schema?.format;
          if (
            parameter.in === 'query' &&
            !NOT_DATES.has(parameter.name) &&
            (DATE_NAME.test(parameter.name) || format === 'date' || format === 'date-time')
          ) {
            documented.push(`${method.toUpperCase()} ${path} query:${parameter.name}`);
          }
        }
        const body = operation.requestBody?.content?.['application/json']?.schema;
        for (const name of dateProperties(doc, body)) {
          documented.push(`${method.toUpperCase()} ${path} body:${name}`);
        }
      }
    }
    const covered = [
      ...QUERY_DATES.map(({ path, name }) => `GET ${path} query:${name}`),
      ...BODY_DATES.map(({ path, name }) => `POST ${path} body:${name}`),
    ];
    expect(documented.sort()).toEqual(covered.sort());
  });

  describe('query parameters', () => {
    const outOfRange = QUERY_DATES.flatMap((input) =>
      (input.kind === 'day' ? [...OUT_OF_RANGE_DAYS, ...YEAR_10000_TIMESTAMPS] : OUT_OF_RANGE_TIMESTAMPS).map(
        (value) => ({ ...input, value }),
      ),
    );
    it.each(outOfRange)(
      'should refuse GET $path?$name=$value as 400 invalid_query',
      async ({ path, name, value }) => {
        const res = await get(path, { [name]: value });
        expectError(res, 400, 'invalid_query', name);
        expect(res.body.error.message).toContain('from 1900-01-01');
        expect(res.body.error.message).toContain('9999-12-31');
      },
    );

    // The timestamps of lists (a day parameter takes no timestamp: its bounds are the usage's, below).
    const lists = QUERY_DATES.filter(({ kind }) => kind === 'timestamp').flatMap((input) =>
      TIMESTAMP_BOUNDS.map((value) => ({ ...input, value })),
    );
    it.each(lists)(
      'should answer GET $path?$name=$value (in range) with a list',
      async ({ path, name, value }) => {
        const res = await get(path, { [name]: value });
        if (EXPORT_PATHS.includes(path)) {
          // An export answers the CSV itself, not a list envelope.
          expect({ status: res.status, type: res.headers['content-type'] }).toEqual({
            status: 200,
            type: 'text/csv; charset=utf-8',
          });
        } else {
          expectList(res);
        }
      },
    );
  });

  describe('GET /services/{id}/usage', () => {
    const usage = (query: Record<string, string>) => get('/api/v1/services/{id}/usage', query);

    it.each(DAY_BOUNDS)('should answer from=to=%s with that one day', async (day) => {
      const res = await usage({ from: day, to: day });
      expectSuccess(res);
      expect((res.body.data as Usage).days.map((each) => each.date)).toEqual([day]);
    });

    it('should answer to=9999-12-31 at once with the 30 days that end it (the walk never ended before)', async () => {
      const started = Date.now();
      const res = await usage({ to: '9999-12-31' });
      expectSuccess(res);
      const data = res.body.data as Usage;
      expect({ from: data.from, to: data.to, days: data.days.length }).toEqual({
        from: '9999-12-02',
        to: '9999-12-31',
        days: 30,
      });
      expect(data.days.at(-1)?.date).toBe('9999-12-31');
      expect(Date.now() - started).toBeLessThan(5_000);
    });

    it('should start the default range no earlier than 1900-01-01', async () => {
      const res = await usage({ to: '1900-01-10' });
      expectSuccess(res);
      expect((res.body.data as Usage).from).toBe('1900-01-01');
      expect((res.body.data as Usage).days).toHaveLength(10);
    });

    it('should refuse the whole range 1900-01-01..9999-12-31 as too long a span', async () => {
      expectError(await usage({ from: '1900-01-01', to: '9999-12-31' }), 400, 'invalid_query', 'from');
    });
  });

  describe('request bodies', () => {
    const bodyFor = (path: string, overrides: Record<string, unknown>) => {
      switch (path) {
        case '/api/v1/invoices':
          return invoiceBody(customer.subscriberId, { currency: 'EUR', ...overrides });
        case '/api/v1/transactions':
          return transactionBody(customer.subscriberId, { currency: 'EUR', ...overrides });
        case '/api/v1/tokens':
          return { name: 'dates', scopes: ['subscribers:read'], ...overrides };
        case '/api/v1/test-clocks':
          return { name: 'dates', ...overrides };
        default:
          return overrides;
      }
    };
    const post = (path: string, body: Record<string, unknown>) =>
      request(t.http).post(concrete(path)).set(bearer(token)).send(bodyFor(path, body));

    const outOfRange = BODY_DATES.flatMap((input) =>
      (input.kind === 'day' ? [...OUT_OF_RANGE_DAYS, ...YEAR_10000_TIMESTAMPS] : OUT_OF_RANGE_TIMESTAMPS).map(
        (value) => ({ ...input, value }),
      ),
    );
    it.each(outOfRange)('should refuse POST $path {$name: $value} as 422', async ({ path, name, value }) => {
      const res = await post(path, { [name]: value });
      expectError(res, 422, 'validation_failed', name);
      expect(res.body.error.message).toContain('from 1900-01-01');
      expect(res.body.error.message).toContain('9999-12-31');
    });

    it.each(DAY_BOUNDS)('should create an invoice due %s', async (day) => {
      const res = await post('/api/v1/invoices', { due_date: day });
      expectSuccess(res, 201);
      expect(res.body.data.due_date).toBe(day);
    });

    it.each([
      ['1900-01-01', '1900-01-01T00:00:00.000Z'],
      ['1900-01-01T00:00:00.000Z', '1900-01-01T00:00:00.000Z'],
      ['9999-12-31T23:59:59.999Z', '9999-12-31T23:59:59.999Z'],
      ['9999-12-31T18:59:59.999-05:00', '9999-12-31T23:59:59.999Z'],
    ])('should record a payment that occurred at %s', async (sent, stored) => {
      const res = await post('/api/v1/transactions', { occurred_at: sent });
      expectSuccess(res, 201);
      expect(res.body.data.occurred_at).toBe(stored);
    });

    it.each(['9999-12-31', '9999-12-31T23:59:59.999Z'])('should issue a token expiring %s', async (at) => {
      const res = await post('/api/v1/tokens', { expires_at: at });
      expectSuccess(res, 201);
      expect(res.body.data.expires_at).toBe(new Date(at).toISOString());
    });

    it('should refuse a token expiring 1900-01-01, in range but past, as 422 naming expires_at', async () => {
      const res = await post('/api/v1/tokens', { expires_at: '1900-01-01T00:00:00.000Z' });
      expectError(res, 422, 'validation_failed', 'expires_at');
      expect(res.body.error.message).toBe('expires_at must be in the future.');
    });
  });

  describe('POST /billing-runs as_of', () => {
    // The clock moves to the end of the range for a real run there (its as_of may not be after today); back after.
    let start: Date;
    beforeAll(() => {
      start = run.clock.now();
    });
    afterEach(() => {
      run.clock.set(start);
    });

    const today = () => run.clock.now().toISOString().slice(0, 10);

    it('should refuse a real run whose as_of is after today as 422 naming as_of, and let a dry run look ahead 62 days', async () => {
      const future = await postRun(t, token, { as_of: addDays(today(), 1) });
      expectError(future, 422, 'validation_failed', 'as_of');
      expect(future.body.error.message).toContain('is in the future');
      const ahead = await postRun(t, token, { as_of: addDays(today(), 62), dry_run: true });
      expectSuccess(ahead, 202);
      expect(ahead.body.data).toMatchObject({ as_of: addDays(today(), 62), dry_run: true });
      expect((await waitForRun(t, token, ahead.body.data.id)).status).toBe('completed');
      expectError(
        await postRun(t, token, { as_of: addDays(today(), 63), dry_run: true }),
        422,
        'validation_failed',
        'as_of',
      );
    });

    it.each(['9999-01-01', '9999-12-01', '9999-12-31'])(
      'should refuse as_of %s, whose period or due dates would pass 9999-12-31, as 422 naming as_of',
      async (asOf) => {
        const res = await postRun(t, token, { as_of: asOf });
        expectError(res, 422, 'validation_failed', 'as_of');
        expect(res.body.error.message).toBe(
          'as_of must be on or before 9998-12-31: a run bills the month from as_of and its invoices fall due up to ' +
            '365 days later, and no date may pass 9999-12-31',
        );
      },
    );

    /** A fresh tenant billed on `billingDay` with `terms` days to pay, and one active service of 3,100. */
    async function billedCustomer(billingDay: number, terms: number): Promise<Customer> {
      const tenantCustomer = await createCustomer(t, { billing_day: billingDay, payment_terms_days: terms });
      const plan = await createEurPlan(t, tenantCustomer.tenant.token, 3100);
      await createActiveService(t, tenantCustomer.tenant.token, tenantCustomer.subscriberId, plan.id);
      return tenantCustomer;
    }

    async function completedRun(who: Customer, asOf: string): Promise<BillingRun> {
      const res = await postRun(t, who.tenant.token, { as_of: asOf });
      expectSuccess(res, 202);
      return waitForRun(t, who.tenant.token, res.body.data.id);
    }

    it('should bill as_of 1900-01-01 for 1900-01-01 to 1900-01-31 (years 0–99 once became 19xx)', async () => {
      const who = await billedCustomer(1, 14);
      const done = await completedRun(who, '1900-01-01');
      expect({ status: done.status, errors: done.errors, invoices: done.invoices_created }).toEqual({
        status: 'completed',
        errors: [],
        invoices: 1,
      });
      const [invoice] = await invoicesOf(t, who.tenant.token, who.subscriberId);
      expect(invoice.due_date).toBe('1900-01-15');
      expect(invoice.lines.map((line) => line.description)).toEqual([
        expect.stringMatching(/, 1900-01-01 to 1900-01-31$/),
      ]);
    });

    it('should bill the latest as_of, 9998-12-28 on 365 days terms, due 9999-12-28 without an error', async () => {
      const who = await billedCustomer(28, 365);
      // The day before, the upcoming invoice previews that run: due on the latest due date a run may give.
      run.clock.set('9998-12-27T12:00:00.000Z');
      const upcoming = await request(t.http)
        .get(`/api/v1/subscribers/${who.subscriberId}/upcoming-invoice`)
        .set(bearer(who.tenant.token));
      expectSuccess(upcoming);
      expect(upcoming.body.data).toMatchObject({ as_of: '9998-12-28', due_date: '9999-12-28' });

      run.clock.set('9998-12-28T12:00:00.000Z');
      const done = await completedRun(who, '9998-12-28');
      expect({ status: done.status, errors: done.errors, invoices: done.invoices_created }).toEqual({
        status: 'completed',
        errors: [],
        invoices: 1,
      });
      const [invoice] = await invoicesOf(t, who.tenant.token, who.subscriberId);
      expect(invoice.due_date).toBe('9999-12-28');
      // The month billed in advance; the months before are charged too (the service was active all of them).
      expect(invoice.lines.map((line) => line.description)).toContainEqual(
        expect.stringMatching(/, 9998-12-28 to 9999-01-27$/),
      );
      type Dated = { description: string; amount: number; period_start: string; period_end: string };
      const dates = (lines: Dated[]) =>
        lines.map(({ description, amount, period_start, period_end }) => ({
          description,
          amount,
          period_start,
          period_end,
        }));
      const invoiceLines = dates(invoice.lines as unknown as Dated[]);
      expect(invoiceLines.at(-1)).toMatchObject({ period_start: '9998-12-28', period_end: '9999-01-27' });
      for (const line of invoiceLines) {
        expect(line.period_start <= line.period_end && line.period_end <= '9999-12-31').toBe(true);
      }
      // The preview was that invoice, line for line.
      expect(dates(upcoming.body.data.lines)).toEqual(invoiceLines);
      expect(upcoming.body.data.total).toBe(invoice.total);

      // The run's items: what the subscriber was billed, with the same dates.
      const items = await request(t.http)
        .get(`/api/v1/billing-runs/${done.id}/items`)
        .set(bearer(who.tenant.token));
      expectList(items);
      expect(items.body.data).toHaveLength(1);
      const [item] = items.body.data;
      expect(item).toMatchObject({
        billing_run_id: done.id,
        subscriber_id: who.subscriberId,
        invoice_id: invoice.id,
        total: invoice.total,
        error: null,
      });
      expect(dates(item.lines)).toEqual(invoiceLines);

      // After it, the next run would be 9999-01-28, past the last day a run may bill: the preview says nothing comes
      // (it answered 500 when the due date passed 9999-12-31), on the day of the run and on the last day of the range.
      for (const at of ['9998-12-28T12:00:00.000Z', '9998-12-31T12:00:00.000Z']) {
        run.clock.set(at);
        const after = await request(t.http)
          .get(`/api/v1/subscribers/${who.subscriberId}/upcoming-invoice`)
          .set(bearer(who.tenant.token));
        expectSuccess(after);
        expect(after.body.data).toMatchObject({ as_of: null, due_date: null, lines: [], total: 0 });
      }
    });

    it('should accept as_of 9998-12-31, the last day allowed (a day no billing_day matches: nobody is due)', async () => {
      const profile = await createProfile(t, token, { billing_day: 28, payment_terms_days: 365 });
      await createBilledSubscriber(t, token, profile.id);
      run.clock.set('9998-12-31T12:00:00.000Z');
      const done = await completedRun(customer, '9998-12-31');
      expect({ status: done.status, errors: done.errors }).toEqual({ status: 'completed', errors: [] });
      // A dry run may look ahead, but not past the last day a run may bill.
      const past = await postRun(t, token, { as_of: '9999-01-01', dry_run: true });
      expectError(past, 422, 'validation_failed', 'as_of');
      expect(past.body.error.message).toContain('on or before 9998-12-31');
    });
  });
});

/**
 * The hang itself: a usage request ending 9999-12-31 kept a server's only thread in an endless walk, so /health/live
 * stopped answering. A server of its own (on the suite's database), so that a regression fails within the time limits
 * below instead of blocking the test process.
 */
describe('Hardening: a usage request up to 9999-12-31 leaves the server answering', () => {
  let server: ServerChild | undefined;

  afterAll(async () => {
    await server?.stop('SIGTERM');
  });

  it('should answer the usage request quickly, and /health/live right after it', async () => {
    server = await startSuiteServer();
    const { token: tenantToken } = await createTenantWithToken(server.url, ['admin'], uniqueSlug('dates'));
    const subscriber = await createSubscriber(server.url, tenantToken);
    const created = await createService(server.url, tenantToken, subscriber.id);

    const usage: Response = await request(server.url)
      .get(`/api/v1/services/${created.service.id}/usage`)
      .query({ to: '9999-12-31' })
      .set(bearer(tenantToken))
      .timeout(10_000);
    expect(usage.status).toBe(200);
    expect(usage.body.data.days).toHaveLength(30);
    await request(server.url).get('/health/live').timeout(5_000).expect(200);
  });
});
