import { randomBytes } from 'node:crypto';
import request, { type Response } from 'supertest';
import { TestClock } from '../support/test-clock';
import {
  allocate,
  BILLING_SCOPES,
  byHand,
  createInvoice,
  eventsOf,
  getBalance,
  getInvoice,
  getTransaction,
  listAll,
  listIds,
  postTransaction,
  transactionBody,
  uniqueExternalId,
  voidInvoice,
} from '../support/billing-factory';
import {
  addDays,
  at,
  type BillingRun,
  createActiveService,
  createBilledSubscriber,
  createEurPlan,
  createProfile,
  invoicesOf,
  postRun,
  RUN_ENV,
  waitForRun,
} from '../support/billing-run-factory';
import { expectError, expectReplayOf } from '../support/envelope';
import { bearer } from '../support/factories';
import {
  createPlan,
  DEFAULT_PPPOE_PASSWORD,
  type Order,
  postService,
  PROVISIONING_SCOPES,
  radiusRows,
  type Service,
  uniquePppoeUsername,
  waitForOrder,
} from '../support/provisioning-factory';
import {
  createSubscriber,
  type EventBody,
  getSubscriber,
  listen,
  postStatus,
  postSubscriber,
  SUBSCRIBER_SCOPES,
  subscriberBody,
  type SubscriberRecord,
  uniqueRef,
} from '../support/subscriber-factory';
import { createTenantWithToken, startTestApp, type TenantWithToken, type TestApp } from '../support/test-app';
import { postTicket, type Ticket, TICKET_SCOPES } from '../support/ticket-factory';
import { captureLogs, recordSecrets } from './support/log-capture';
import {
  countCodes,
  countStatuses,
  expectSound,
  fire,
  judged,
  ledgerChain,
  moneyDrift,
} from './support/races-checks';

/**
 * Issue 18 item 2: races, one effect each, invariants checked after. Two app instances run on one DATABASE_URL (and
 * REDIS_URL when set), each with its own pool and loopback HTTP server, and every race is split between them. Every
 * answer must be below 500, in the envelope, with a catalog code at its catalog status, and never name a deadlock or
 * serialization failure. Afterwards the outcome is read back through the API, and from the database where the API
 * shows no sum (money drift, rows per key, billed periods, RADIUS passwords):
 * - 50 creates of one subscriber external_id, and 50 payments of one transaction external_id: one 201, 49 × 409;
 * - 20 requests with one Idempotency-Key, 10 on each instance (a payment, a subscriber, an allocation): one effect,
 *   the others replays of it or 409 idempotency_request_in_progress, and once settled a replay on either instance;
 * - allocations, refunds and voids on one payment and one invoice: nothing allocated or refunded twice, a void
 *   invoice holds no allocation, balance = sum of the ledger = its last balance_after;
 * - subscribers' status changes racing PATCHes and two bill runs: each ends in a serial outcome its events replay,
 *   billed exactly once, with the payment terms of the profile it had when the run billed it;
 * - parallel services claiming one PPPoE username: one 202, the others 409, one service, the winner's password in
 *   RADIUS;
 * - 50 parallel ticket creates (and 10 refused duplicates among them): numbers 1..50, no gap, no repeat.
 *
 * Without DATABASE_URL the app runs on the embedded database, which runs one transaction at a time: the requests then
 * queue instead of racing in the database (the test names say so), and the outcome must be the same.
 *
 * Knobs: RELIABILITY_RACE_WIDTH (parallel creates, default 50), RELIABILITY_RACE_ROUNDS (payment/invoice rounds,
 * default 6), RELIABILITY_RACE_SUBSCRIBERS (subscribers in the bill-run race, default 12), RELIABILITY_RACE_CLAIMS
 * (services claiming one username, default 20), RELIABILITY_RACE_STAGGER_MS (spread of the bill-run race's changes).
 */

const WIDTH = Number(process.env.RELIABILITY_RACE_WIDTH ?? 50);
const ROUNDS = Number(process.env.RELIABILITY_RACE_ROUNDS ?? 6);
const SUBSCRIBERS = Number(process.env.RELIABILITY_RACE_SUBSCRIBERS ?? 12);
const CLAIMS = Number(process.env.RELIABILITY_RACE_CLAIMS ?? 20);
/** The bill runs' batch size, small so a run takes several transactions the changes can land between. */
const RUN_BATCH = 2;
/** The gap between the changes of one subscriber and the next's in the bill-run race, spreading them over the runs. */
const STAGGER_MS = Number(process.env.RELIABILITY_RACE_STAGGER_MS ?? 8);
/** Requests with one idempotency key per instance. */
const PER_INSTANCE = 10;

const embedded = process.env.TEST_EMBEDDED_DATABASE === 'true';
/** Said in every race's name on the embedded database, where the race becomes a queue. */
const ON_DB = embedded
  ? ' (embedded database: one transaction at a time, so they queue rather than race)'
  : '';

/** What each race measured, printed at the end (docs/reliability.md takes its figures from here). */
const figures: Record<string, unknown> = {};

/**
 * The second instance carries out bill runs like the first (the bill-run race needs two workers), but leaves the
 * provisioning, webhook and automation work to the first, so services are activated on the shared test clock once.
 */
const SECOND_WORKERS = {
  PROVISIONING_WORKER_ENABLED: 'false',
  WEBHOOK_WORKER_ENABLED: 'false',
  AUTOMATION_ENABLED: 'false',
};

describe(`Races: one effect each, invariants after (issue 18 item 2)${embedded ? ', embedded database' : ''}`, () => {
  /** Two instances on one DATABASE_URL (and REDIS_URL when set), each with its own pool and HTTP server. */
  let t: TestApp;
  let second: TestApp;
  /** The business clock both instances read; only the bill-run race moves it (always forward). */
  const clock = new TestClock('2041-01-01T00:00:00.000Z');
  const started = Date.now();

  beforeAll(async () => {
    const env = { ...RUN_ENV, BILLING_RUN_BATCH_SIZE: String(RUN_BATCH), LOG_LEVEL: 'info' };
    t = await startTestApp(env, { clock, logDestination: captureLogs('races-1') });
    second = await startTestApp(
      { ...env, ...SECOND_WORKERS },
      { clock, logDestination: captureLogs('races-2') },
    );
    await listen(t);
    await listen(second);
  }, 60_000);

  afterAll(async () => {
    await second?.close();
    await t?.close();
    process.stdout.write(
      `races${embedded ? ' (embedded)' : ''}: ${Object.values(judged).reduce((a, b) => a + b, 0)} answers judged ` +
        `${JSON.stringify(judged)} in ${Date.now() - started} ms\n${JSON.stringify(figures, null, 2)}\n`,
    );
  });

  /** The instance the i-th request of a race goes to: every race is split between the two. */
  function via(i: number): TestApp {
    return i % 2 === 0 ? t : second;
  }

  /** A fresh tenant and a token of it, its raw token recorded for the log scan. */
  async function tenantOf(scopes: string[]): Promise<TenantWithToken> {
    const tenant = await createTenantWithToken(t, scopes);
    recordSecrets(tenant.token);
    return tenant;
  }

  describe('one external_id', () => {
    it(`should create one subscriber of ${WIDTH} parallel creates with one external_id, the rest 409 duplicate_subscriber${ON_DB}`, async () => {
      const tenant = await tenantOf(SUBSCRIBER_SCOPES);
      const externalId = uniqueRef('race');

      const answers = await fire(WIDTH, (i) =>
        postSubscriber(
          via(i),
          tenant.token,
          subscriberBody({ external_id: externalId, full_name: `Racer ${i}` }),
        ),
      );

      expectSound(answers);
      expect(countStatuses(answers)).toEqual({ 201: 1, 409: WIDTH - 1 });
      for (const res of answers.filter((r) => r.status === 409)) {
        expectError(res, 409, 'duplicate_subscriber', 'external_id');
      }
      const winner = answers.find((res) => res.status === 201)!.body.data as SubscriberRecord;
      // The one row is the winner's whole request, not a mix of several.
      expect(await getSubscriber(t, tenant.token, winner.id)).toMatchObject({
        external_id: externalId,
        full_name: winner.full_name,
      });
      expect(await listIds(t, tenant.token, '/api/v1/subscribers', { external_id: externalId })).toEqual([
        winner.id,
      ]);
      const [rows] = await t.dataSource.query<{ n: number }[]>(
        'SELECT count(*)::int AS n FROM subscribers WHERE tenant_id = $1 AND external_id = $2',
        [tenant.tenantId, externalId],
      );
      expect(rows.n).toBe(1);
      const created = await listAll<EventBody>(t, tenant.token, '/api/v1/events', {
        type: 'subscriber.created',
      });
      expect(created.map((event) => event.subject_id)).toEqual([winner.id]);
      figures.subscriberExternalId = countStatuses(answers);
    });

    it(`should record one payment of ${WIDTH} parallel payments with one external_id, the rest 409 duplicate_transaction${ON_DB}`, async () => {
      const tenant = await tenantOf(BILLING_SCOPES);
      const subscriber = await createSubscriber(t, tenant.token);
      const externalId = uniqueExternalId('race');

      // Each request a different amount: the recorded one tells whose request won, and that only one did.
      const answers = await fire(WIDTH, (i) =>
        postTransaction(
          via(i),
          tenant.token,
          transactionBody(subscriber.id, { external_id: externalId, amount: 100 * (i + 1) }),
        ),
      );

      expectSound(answers);
      expect(countStatuses(answers)).toEqual({ 201: 1, 409: WIDTH - 1 });
      for (const res of answers.filter((r) => r.status === 409)) {
        expectError(res, 409, 'duplicate_transaction', 'external_id');
      }
      const winner = answers.find((res) => res.status === 201)!.body.data as { id: string; amount: number };
      expect(await listIds(t, tenant.token, '/api/v1/transactions', { external_id: externalId })).toEqual([
        winner.id,
      ]);
      expect(
        await listIds(t, tenant.token, '/api/v1/transactions', { subscriber_id: subscriber.id }),
      ).toEqual([winner.id]);
      // One posting of the winner's amount: the balance, the ledger and its chain agree.
      const ledger = await ledgerChain(t, tenant.token, subscriber.id);
      expect(ledger.broken).toEqual([]);
      expect(ledger.entries.map((entry) => [entry.source_id, entry.amount])).toEqual([
        [winner.id, -winner.amount],
      ]);
      expect((await getBalance(t, tenant.token, subscriber.id))?.balance).toBe(-winner.amount);
      expect(await moneyDrift(t.dataSource, tenant.tenantId)).toEqual({});
      const events = await listAll<EventBody>(t, tenant.token, '/api/v1/events', {
        type: 'transaction.created',
      });
      expect(events.map((event) => event.subject_id)).toEqual([winner.id]);
      figures.paymentExternalId = countStatuses(answers);
    });
  });

  describe('one idempotency key on two instances', () => {
    const TWO = embedded ? ' (embedded database: both instances share it one transaction at a time)' : '';

    /**
     * Sends `send` PER_INSTANCE times to each instance at once, all with one fresh Idempotency-Key, and checks what
     * any keyed POST must answer: one original of `status`; the rest replays of it or 409
     * idempotency_request_in_progress; once settled, a replay of it on either instance; one stored key. Answers the
     * original's record.
     */
    async function oneKeyOnTwoInstances(
      tenant: TenantWithToken,
      what: string,
      status: number,
      send: (app: TestApp, headers: Record<string, string>) => PromiseLike<Response>,
    ): Promise<Record<string, unknown>> {
      const key = { 'Idempotency-Key': uniqueRef('race-key') };

      const answers = await fire(2 * PER_INSTANCE, (i) => send(via(i), key));

      expectSound(answers);
      expect(Object.keys(countStatuses(answers)).filter((s) => ![String(status), '409'].includes(s))).toEqual(
        [],
      );
      for (const res of answers.filter((r) => r.status === 409)) {
        expectError(res, 409, 'idempotency_request_in_progress', 'X-Idempotency-Key');
      }
      const done = answers.filter((res) => res.status === status);
      const originals = done.filter((res) => res.headers['idempotent-replayed'] === undefined);
      expect(originals).toHaveLength(1);
      const original = originals[0];
      for (const res of done.filter((r) => r !== original)) {
        expectReplayOf(res, original);
      }

      // Settled: the key replays the same answer on either instance.
      const replays = [await send(t, key), await send(second, key)];
      expectSound(replays);
      for (const replay of replays) {
        expectReplayOf(replay, original);
      }
      const keys = await t.dataSource.query<{ response_status: number }[]>(
        'SELECT response_status FROM idempotency_keys WHERE tenant_id = $1 AND key = $2',
        [tenant.tenantId, key['Idempotency-Key']],
      );
      expect(keys).toEqual([{ response_status: status }]);
      figures[`idempotency: ${what}`] = {
        originalOnInstance: (answers.indexOf(original) % 2) + 1,
        replays: done.length - 1,
        inProgress: answers.length - done.length,
      };
      return original.body.data as Record<string, unknown>;
    }

    it(`should record one payment of ${2 * PER_INSTANCE} POST /transactions with one Idempotency-Key on two instances at once${TWO}`, async () => {
      const tenant = await tenantOf(BILLING_SCOPES);
      const subscriber = await createSubscriber(t, tenant.token);
      const body = transactionBody(subscriber.id, { amount: 4321, reference: uniqueRef('ref') });

      const payment = await oneKeyOnTwoInstances(tenant, 'payment', 201, (app, key) =>
        postTransaction(app, tenant.token, body, key),
      );

      // One effect: one transaction, one ledger posting, one event.
      expect(
        await listIds(t, tenant.token, '/api/v1/transactions', { subscriber_id: subscriber.id }),
      ).toEqual([payment.id]);
      const ledger = await ledgerChain(t, tenant.token, subscriber.id);
      expect(ledger.entries.map((entry) => [entry.source_id, entry.amount])).toEqual([[payment.id, -4321]]);
      expect((await getBalance(second, tenant.token, subscriber.id))?.balance).toBe(-4321);
      const events = await listAll<EventBody>(t, tenant.token, '/api/v1/events', {
        type: 'transaction.created',
      });
      expect(events.map((event) => event.subject_id)).toEqual([payment.id]);
    });

    it(`should create one subscriber of ${2 * PER_INSTANCE} POST /subscribers with one Idempotency-Key on two instances at once${TWO}`, async () => {
      const tenant = await tenantOf(SUBSCRIBER_SCOPES);
      // No external_id or email: nothing but the key keeps a second subscriber out.
      const body = { full_name: 'Keyed Racer', status: 'prospect' };

      const subscriber = await oneKeyOnTwoInstances(tenant, 'subscriber', 201, (app, key) =>
        postSubscriber(app, tenant.token, body, key),
      );

      expect(await listIds(t, tenant.token, '/api/v1/subscribers')).toEqual([subscriber.id]);
      const events = await listAll<EventBody>(t, tenant.token, '/api/v1/events', {
        type: 'subscriber.created',
      });
      expect(events.map((event) => event.subject_id)).toEqual([subscriber.id]);
    });

    it(`should allocate once for ${2 * PER_INSTANCE} POST /transactions/{id}/allocate with one Idempotency-Key on two instances at once${TWO}`, async () => {
      const tenant = await tenantOf(BILLING_SCOPES);
      const subscriber = await createSubscriber(t, tenant.token);
      const invoice = await createInvoice(t, tenant.token, subscriber.id, 1000);
      // Held for allocation by hand (auto_apply: false): the allocation is the effect the key must give once.
      const payment = await byHand.createPayment(t, tenant.token, subscriber.id, 1000);
      const body = { allocations: [{ invoice_id: invoice.id, amount: 300 }] };

      await oneKeyOnTwoInstances(tenant, 'allocation', 200, (app, key) =>
        allocate(app, tenant.token, payment.id, body, key),
      );

      // One allocation of 300: the payment and the invoice each show it once, the money tables agree.
      const after = await getTransaction(t, tenant.token, payment.id);
      expect(after).toMatchObject({ allocated_amount: 300, unallocated_amount: 700 });
      expect(after.allocations?.map((row) => row.amount)).toEqual([300]);
      expect(await getInvoice(second, tenant.token, invoice.id)).toMatchObject({
        amount_paid: 300,
        amount_due: 700,
      });
      expect(await moneyDrift(t.dataSource, tenant.tenantId)).toEqual({});
    });
  });

  describe('allocations, refunds and voids on one payment and one invoice', () => {
    const PAYMENT = 500;
    const TOTAL = 600;
    const PIECE = 50;
    const ALLOCATIONS = 8;
    const REFUNDS = 8;
    const TO_BALANCE = 2;
    const VOIDS = 2;

    it(`should never give a payment or an invoice away twice in ${ROUNDS} rounds of ${
      ALLOCATIONS + REFUNDS + TO_BALANCE + VOIDS
    } racing allocations, refunds and voids${ON_DB}`, async () => {
      const tenant = await tenantOf(BILLING_SCOPES);
      const outcomes: { voided: boolean; allocated: number; refunded: number; unallocated: number }[] = [];

      for (let round = 0; round < ROUNDS; round++) {
        const subscriber = await createSubscriber(t, tenant.token);
        const invoice = await createInvoice(t, tenant.token, subscriber.id, TOTAL);
        // Held for allocation by hand (auto_apply: false), so the racing allocations have the whole payment to share.
        const payment = await byHand.createPayment(t, tenant.token, subscriber.id, PAYMENT);
        const refund = transactionBody(subscriber.id, {
          kind: 'refund',
          amount: PIECE,
          refund_of: payment.id,
        });
        type Kind = 'allocate' | 'balance' | 'refund' | 'void';
        const kinds: Kind[] = [
          ...Array<Kind>(ALLOCATIONS).fill('allocate'),
          ...Array<Kind>(REFUNDS).fill('refund'),
          ...Array<Kind>(TO_BALANCE).fill('balance'),
        ];
        // The voids go first in even rounds and last in odd ones, so both the void and the allocations get to win.
        const order: Kind[] =
          round % 2 === 0
            ? [...Array<Kind>(VOIDS).fill('void'), ...kinds]
            : [...kinds, ...Array<Kind>(VOIDS).fill('void')];
        const send: Record<Kind, (app: TestApp) => PromiseLike<Response>> = {
          allocate: (app) =>
            allocate(app, tenant.token, payment.id, {
              allocations: [{ invoice_id: invoice.id, amount: PIECE }],
            }),
          balance: (app) => allocate(app, tenant.token, payment.id, { target: 'balance', amount: PIECE }),
          refund: (app) => postTransaction(app, tenant.token, refund),
          void: (app) => voidInvoice(app, tenant.token, invoice.id),
        };

        const answers = await fire(order.length, (i) => send[order[i]](via(i)));

        expectSound(answers);
        const of = (kind: Kind) => answers.filter((_, i) => order[i] === kind);
        const won = (kind: Kind, status: number) => of(kind).filter((res) => res.status === status).length;
        // Each refusal is one the race explains: the money is gone, or the invoice is void (or no longer voidable).
        for (const [kind, allowed] of [
          ['allocate', ['-', 'allocation_exceeds_unallocated', 'invalid_state_transition']],
          ['balance', ['-', 'allocation_exceeds_unallocated']],
          ['refund', ['-', 'refund_exceeds_refundable']],
          ['void', ['-', 'invalid_state_transition']],
        ] as [Kind, string[]][]) {
          expect({
            kind,
            codes: Object.keys(countCodes(of(kind))).filter((code) => !allowed.includes(code)),
          }).toEqual({
            kind,
            codes: [],
          });
        }
        for (const res of of('allocate').filter((r) => r.status === 409)) {
          expectError(res, 409, 'invalid_state_transition', 'allocations.0.invoice_id');
        }

        const afterPayment = await getTransaction(t, tenant.token, payment.id);
        const afterInvoice = await getInvoice(t, tenant.token, invoice.id);
        const voided = won('void', 200) === 1;
        const toInvoice = won('allocate', 200) * PIECE;
        const toBalance = won('balance', 200) * PIECE;
        const refunded = won('refund', 201) * PIECE;

        // The payment: what the answers granted, nothing more, and never more than its amount.
        expect(won('void', 200)).toBeLessThanOrEqual(1);
        expect(afterPayment).toMatchObject({
          allocated_amount: toInvoice + toBalance,
          refunded_amount: refunded,
          unallocated_amount: PAYMENT - toInvoice - toBalance - refunded,
        });
        expect(afterPayment.unallocated_amount).toBeGreaterThanOrEqual(0);
        expect((afterPayment.allocations ?? []).reduce((sum, a) => sum + a.amount, 0)).toBe(
          toInvoice + toBalance,
        );
        expect(
          await listIds(t, tenant.token, '/api/v1/transactions', {
            subscriber_id: subscriber.id,
            kind: 'refund',
          }),
        ).toHaveLength(won('refund', 201));

        // The invoice: paid what its allocations hold, never past its total; void only while nothing was allocated.
        const paid = (afterInvoice.allocations ?? []).reduce((sum, a) => sum + a.amount, 0);
        expect({ amount_paid: afterInvoice.amount_paid, amount_due: afterInvoice.amount_due }).toEqual({
          amount_paid: paid,
          amount_due: TOTAL - paid,
        });
        expect(paid).toBe(toInvoice);
        expect(paid).toBeLessThanOrEqual(TOTAL);
        if (voided) {
          expect(afterInvoice).toMatchObject({ status: 'void', amount_paid: 0, allocations: [] });
          expect(won('allocate', 200)).toBe(0);
        } else {
          expect(afterInvoice.status).toBe(paid > 0 ? 'partially_paid' : 'open');
          expect(won('void', 200)).toBe(0);
        }

        // Balance = the ledger's sum = its last balance_after, and it is what the granted answers add up to.
        const ledger = await ledgerChain(t, tenant.token, subscriber.id);
        expect(ledger.broken).toEqual([]);
        const balance = (await getBalance(t, tenant.token, subscriber.id))?.balance;
        expect(balance).toBe(ledger.sum);
        expect(balance).toBe((voided ? 0 : TOTAL) - PAYMENT + refunded);
        outcomes.push({
          voided,
          allocated: toInvoice + toBalance,
          refunded,
          unallocated: afterPayment.unallocated_amount,
        });
      }

      expect(await moneyDrift(t.dataSource, tenant.tenantId)).toEqual({});
      figures.allocationsRefundsVoids = outcomes;
    });
  });

  describe('a status change racing a PATCH and bill runs', () => {
    it(`should leave each of ${SUBSCRIBERS} subscribers in a serial outcome its events replay, billed once by two racing runs${ON_DB}`, async () => {
      const asOf = '2041-03-07';
      const tenant = await tenantOf(['admin']);
      const token = tenant.token;
      // Two profiles billed the same day with other payment terms: the invoice's due date tells which one the run saw.
      const terms: Record<string, number> = {};
      const before = await createProfile(t, token, { billing_day: 7, payment_terms_days: 10 });
      const after = await createProfile(t, token, { billing_day: 7, payment_terms_days: 20 });
      terms[before.id] = 10;
      terms[after.id] = 20;
      const plan = await createEurPlan(t, token, 2500);
      recordSecrets(DEFAULT_PPPOE_PASSWORD);
      clock.set(at(asOf, '00:30'));
      const ids: string[] = [];
      for (let i = 0; i < SUBSCRIBERS; i++) {
        const subscriber = await createBilledSubscriber(t, token, before.id);
        await createActiveService(t, token, subscriber.id, plan.id);
        ids.push(subscriber.id);
      }
      clock.set(at(asOf, '03:00'));

      // Both runs and, per subscriber, a suspension and a PATCH of name, profile and metadata. The runs bill in id
      // order, so the changes go in the opposite order, spread over the runs: the first billed are changed last.
      const runs = [postRun(t, token, { as_of: asOf }), postRun(second, token, { as_of: asOf })];
      const changes = ids.flatMap((id, i) => {
        const wait = (SUBSCRIBERS - 1 - i) * STAGGER_MS;
        return [
          delayed(wait, () => postStatus(via(i), token, id, 'suspended', 'manual')),
          delayed(wait, () =>
            request(via(i + 1).http)
              .patch(`/api/v1/subscribers/${id}`)
              .set(bearer(token))
              .send({
                full_name: `Patched ${i}`,
                billing_profile_id: after.id,
                metadata: { race: 'patched' },
              }),
          ),
        ];
      });
      const answers = await Promise.all([...runs, ...changes]);

      expectSound(answers);
      expect(countStatuses(answers)).toEqual({ 202: 2, 200: 2 * SUBSCRIBERS });
      const finished: BillingRun[] = [];
      for (const res of answers.slice(0, 2)) {
        finished.push(await waitForRun(t, token, res.body.data.id as string));
      }
      expect(finished.map((run) => [run.status, run.errors])).toEqual([
        ['completed', []],
        ['completed', []],
      ]);
      expect(finished[0].subscribers_billed + finished[1].subscribers_billed).toBe(SUBSCRIBERS);

      const orders: Record<string, number> = { 'run, then PATCH': 0, 'PATCH, then run': 0 };
      for (const [i, id] of ids.entries()) {
        // Billed exactly once for the period: one invoice, one billed period row.
        const invoices = await invoicesOf(t, token, id);
        expect({ id, invoices: invoices.length }).toEqual({ id, invoices: 1 });
        const periods = await t.dataSource.query<{ n: number }[]>(
          'SELECT count(*)::int AS n FROM billing_periods WHERE tenant_id = $1 AND subscriber_id = $2 AND period_start = $3',
          [tenant.tenantId, id, asOf],
        );
        expect(periods[0].n).toBe(1);

        // Its events and the invoice's, in the order they were written, replay to the state each one carries.
        const own = await listAll<EventBody>(t, token, '/api/v1/events', { subject_id: id });
        expect(own.map((event) => event.type).sort()).toEqual([
          'subscriber.created',
          'subscriber.status_changed',
          'subscriber.updated',
        ]);
        const billed = await eventsOf(t, token, invoices[0].id, 'invoice.created');
        expect(billed).toHaveLength(1);
        const story = [...own, ...billed].sort((x, y) => x.id.localeCompare(y.id));
        expect(story[0].type).toBe('subscriber.created');
        let state = pickState(story[0].data.object);
        for (const event of story.slice(1)) {
          if (event.type === 'subscriber.status_changed') {
            expect({ from: event.data.from, to: event.data.to }).toEqual({
              from: state.status,
              to: 'suspended',
            });
            state = { ...state, status: 'suspended', suspension_reason: 'manual' };
            expect(pickState(event.data.object)).toEqual(state);
          } else if (event.type === 'subscriber.updated') {
            state = {
              ...state,
              full_name: `Patched ${i}`,
              billing_profile_id: after.id,
              metadata: { ...(state.metadata as Record<string, unknown>), race: 'patched' },
            };
            expect(pickState(event.data.object)).toEqual(state);
          } else {
            // The run billed with the terms of the profile the subscriber had at that point of the story.
            const profileId = state.billing_profile_id as string;
            expect({ id, due_date: invoices[0].due_date }).toEqual({
              id,
              due_date: addDays(asOf, terms[profileId]),
            });
            orders[profileId === before.id ? 'run, then PATCH' : 'PATCH, then run'] += 1;
          }
        }
        expect(pickState(await getSubscriber(t, token, id))).toEqual(state);
        expect(state).toMatchObject({
          status: 'suspended',
          full_name: `Patched ${i}`,
          billing_profile_id: after.id,
        });
      }
      figures.statusPatchBillRun = {
        subscribers: SUBSCRIBERS,
        runs: finished.map((run) => run.subscribers_billed),
        orders,
      };
    });
  });

  describe('one PPPoE username', () => {
    it(`should give one of ${CLAIMS} parallel services claiming one PPPoE username a 202, the others 409${ON_DB}`, async () => {
      const tenant = await tenantOf(PROVISIONING_SCOPES);
      const plan = await createPlan(t, tenant.token);
      const subscribers = [
        (await createSubscriber(t, tenant.token, { status: 'active' })).id,
        (await createSubscriber(t, tenant.token, { status: 'active' })).id,
      ];
      const username = uniquePppoeUsername('race');
      // Each claim its own password: the one RADIUS ends up with must be the winner's.
      const passwords = Array.from({ length: CLAIMS }, () => `pw-${randomBytes(8).toString('hex')}`);
      recordSecrets(...passwords);

      const answers = await fire(CLAIMS, (i) =>
        postService(via(i), tenant.token, subscribers[Math.floor(i / 2) % 2], {
          plan_id: plan.id,
          pppoe_username: username,
          pppoe_password: passwords[i],
        }),
      );

      expectSound(answers);
      expect(countStatuses(answers)).toEqual({ 202: 1, 409: CLAIMS - 1 });
      for (const res of answers.filter((r) => r.status === 409)) {
        expectError(res, 409, 'duplicate_service_username', 'pppoe_username');
      }
      const index = answers.findIndex((res) => res.status === 202);
      const { service, order } = answers[index].body.data as { service: Service; order: Order };
      expect(service.subscriber_id).toBe(subscribers[Math.floor(index / 2) % 2]);
      expect(await listIds(t, tenant.token, '/api/v1/services', { pppoe_username: username })).toEqual([
        service.id,
      ]);
      const rows = await t.dataSource.query<{ id: string }[]>(
        'SELECT id FROM services WHERE tenant_id = $1 AND pppoe_username = $2',
        [tenant.tenantId, username],
      );
      expect(rows).toEqual([{ id: service.id }]);
      expect(
        await listIds(t, tenant.token, '/api/v1/provisioning-orders', { service_id: service.id }),
      ).toEqual([order.id]);
      expect((await waitForOrder(t, tenant.token, order.id, ['completed', 'failed'], 15_000)).status).toBe(
        'completed',
      );
      const radius = await radiusRows(t, service.radius_username);
      expect(radius.check).toEqual([{ attribute: 'Cleartext-Password', op: ':=', value: passwords[index] }]);
      figures.pppoeUsername = countStatuses(answers);
    });
  });

  describe('ticket numbers', () => {
    const DUPLICATES = 10;

    it(`should number ${WIDTH} parallel ticket creates 1..${WIDTH} with no gap or repeat, ${DUPLICATES} refused duplicates among them${ON_DB}`, async () => {
      const tenant = await tenantOf(TICKET_SCOPES);
      const shared = uniqueRef('race-ticket');
      // The first create and DUPLICATES more share one external_id: exactly one of them is numbered.
      const answers = await fire(WIDTH + DUPLICATES, (i) =>
        postTicket(via(i), tenant.token, {
          subject: `Race ${i}`,
          external_id: i === 0 || i >= WIDTH ? shared : uniqueRef('ticket'),
        }),
      );

      expectSound(answers);
      expect(countStatuses(answers)).toEqual({ 201: WIDTH, 409: DUPLICATES });
      for (const res of answers.filter((r) => r.status === 409)) {
        expectError(res, 409, 'duplicate_ticket', 'external_id');
      }
      const numbers = answers
        .filter((res) => res.status === 201)
        .map((res) => (res.body.data as Ticket).number)
        .sort((a, b) => a - b);
      expect(numbers).toEqual(Array.from({ length: WIDTH }, (_, i) => i + 1));
      const listed = await listAll<Ticket>(t, tenant.token, '/api/v1/tickets');
      expect(listed.map((ticket) => ticket.number).sort((a, b) => a - b)).toEqual(numbers);
      const [counter] = await t.dataSource.query<{ last_number: number }[]>(
        'SELECT last_number FROM ticket_counters WHERE tenant_id = $1',
        [tenant.tenantId],
      );
      expect(counter.last_number).toBe(WIDTH);
      figures.ticketNumbers = {
        ...countStatuses(answers),
        first: numbers[0],
        last: numbers[numbers.length - 1],
      };
    });
  });
});

/** Sends a request `ms` from now: spreads one race's requests over another's transactions (it waits for nothing). */
function delayed(ms: number, send: () => PromiseLike<Response>): Promise<Response> {
  return new Promise((resolve) => setTimeout(resolve, ms)).then(send);
}

/** The fields of a subscriber the race changes (status and suspension by one request, the rest by the PATCH). */
function pickState(object: Record<string, unknown> | SubscriberRecord): Record<string, unknown> {
  const record = object as Record<string, unknown>;
  return {
    status: record.status,
    suspension_reason: record.suspension_reason,
    full_name: record.full_name,
    billing_profile_id: record.billing_profile_id,
    metadata: record.metadata,
  };
}
