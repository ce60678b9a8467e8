// Syncs data/subscribers.csv into the ISP API: creates each subscriber (once), this month's invoice, the payment
// the row records, allocates it oldest-first, reads the balance, then drains the event log. Safe to re-run: every
// write carries an idempotency key derived from the row, and the API's natural keys (external_id) catch the rest.
// Prints JSON lines; the last one is the summary.
import {
  ApiFailure,
  clientFromEnv,
  idempotencyKey,
  retrying,
  wasReplayed,
  type Api,
  type Schemas,
} from './client.js';
import { readRows, type Row } from './csv.js';

type Outcome = 'created' | 'replayed' | 'existing';
type Transaction = Schemas['Transaction'];
const CURRENCY = 'USD';

const counts = { subscribers: tally(), invoices: tally(), payments: tally() };
function tally(): Record<Outcome, number> {
  return { created: 0, replayed: 0, existing: 0 };
}
function print(line: object): void {
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

/** Create, or find by external_id: a replay (same row, within 24 h) and a 409 (changed row, or later) both mean "exists". */
async function syncSubscriber(api: Api, row: Row): Promise<{ id: string; outcome: Outcome }> {
  const body: Schemas['CreateSubscriber'] = {
    external_id: row.external_id,
    full_name: row.full_name,
    status: row.status,
    metadata: { plan: row.plan, source: 'csv-sync' },
    ...(row.email === undefined ? {} : { email: row.email }),
    ...(row.phone === undefined ? {} : { phone: row.phone }),
  };
  const key = idempotencyKey('subscriber', row.external_id, body);
  const { data, error, response } = await retrying(() =>
    api.POST('/api/v1/subscribers', { body, params: { header: { 'X-Idempotency-Key': key } } }),
  );
  if (data) {
    return { id: data.data.id, outcome: wasReplayed(response) ? 'replayed' : 'created' };
  }
  if (error?.error.code === 'duplicate_subscriber' && error.error.field === 'external_id') {
    const found = await api.GET('/api/v1/subscribers', {
      params: { query: { external_id: row.external_id } },
    });
    const existing = found.data?.data[0];
    if (existing) {
      return { id: existing.id, outcome: 'existing' };
    }
  }
  throw new ApiFailure(`subscriber ${row.external_id}`, response.status, error);
}

/** One invoice per subscriber and month: looked up first (invoices have no natural key of their own), then created. */
async function ensureInvoice(api: Api, subscriberId: string, row: Row, month: string) {
  if (row.invoice_amount === undefined) {
    return undefined;
  }
  const description = `${row.plan} — ${month}`;
  const dueDate = `${month}-28`;
  const listed = await api.GET('/api/v1/invoices', {
    params: { query: { subscriber_id: subscriberId, limit: 100 } },
  });
  if (!listed.data) {
    throw new ApiFailure(`invoices of ${row.external_id}`, listed.response.status, listed.error);
  }
  const existing = listed.data.data.find(
    (invoice) =>
      invoice.status !== 'void' &&
      invoice.due_date === dueDate &&
      invoice.lines.some((line) => line.description === description),
  );
  if (existing) {
    return { id: existing.id, outcome: 'existing' as const };
  }
  const body: Schemas['CreateInvoice'] = {
    subscriber_id: subscriberId,
    currency: CURRENCY,
    due_date: dueDate,
    lines: [{ description, quantity: 1, unit_amount: row.invoice_amount }],
  };
  const key = idempotencyKey('invoice', `${row.external_id}:${month}`, body);
  const { data, error, response } = await retrying(() =>
    api.POST('/api/v1/invoices', { body, params: { header: { 'X-Idempotency-Key': key } } }),
  );
  if (!data) {
    throw new ApiFailure(`invoice of ${row.external_id}`, response.status, error);
  }
  return { id: data.data.id, outcome: wasReplayed(response) ? ('replayed' as const) : ('created' as const) };
}

/** The payment's external_id (the bank reference) is unique per tenant: a 409 duplicate_transaction means it is recorded. */
async function recordPayment(api: Api, subscriberId: string, row: Row) {
  if (row.payment_ref === undefined || row.payment_amount === undefined) {
    return undefined;
  }
  const body: Schemas['CreateTransaction'] = {
    subscriber_id: subscriberId,
    kind: 'payment',
    source: 'external',
    amount: row.payment_amount,
    currency: CURRENCY,
    external_id: row.payment_ref,
    method: 'bank_transfer',
    // This sync allocates each payment itself, oldest invoice first, after recording it (below); without this the
    // API would apply it on receipt (the profile's auto_apply), which does the same.
    auto_apply: false,
  };
  const key = idempotencyKey('payment', row.payment_ref, body);
  const { data, error, response } = await retrying(() =>
    api.POST('/api/v1/transactions', { body, params: { header: { 'X-Idempotency-Key': key } } }),
  );
  if (data) {
    return {
      transaction: data.data,
      outcome: wasReplayed(response) ? ('replayed' as const) : ('created' as const),
    };
  }
  if (error?.error.code === 'duplicate_transaction') {
    const found = await api.GET('/api/v1/transactions', {
      params: { query: { external_id: row.payment_ref } },
    });
    const existing = found.data?.data[0];
    if (existing) {
      return { transaction: existing, outcome: 'existing' as const };
    }
  }
  throw new ApiFailure(`payment ${row.payment_ref}`, response.status, error);
}

/** Oldest open invoice first; what is left stays as credit. Nothing payable is a 200 that allocates nothing. */
async function allocateOldestFirst(api: Api, transaction: Transaction) {
  if (transaction.unallocated_amount === 0) {
    return { transaction, allocatedNow: 0 };
  }
  const key = idempotencyKey('allocate', transaction.id, { unallocated: transaction.unallocated_amount });
  const { data, error, response } = await retrying(() =>
    api.POST('/api/v1/transactions/{transaction_id}/allocate', {
      params: { path: { transaction_id: transaction.id }, header: { 'X-Idempotency-Key': key } },
      body: { strategy: 'oldest_first' },
    }),
  );
  if (!data) {
    throw new ApiFailure(`allocate ${transaction.id}`, response.status, error);
  }
  // A replay answers the first allocation again: nothing moved this time.
  const allocatedNow = wasReplayed(response) ? 0 : data.data.allocated_amount - transaction.allocated_amount;
  return { transaction: data.data, allocatedNow };
}

async function balanceOf(api: Api, subscriberId: string) {
  const { data, error, response } = await api.GET('/api/v1/subscribers/{id}/balance', {
    params: { path: { id: subscriberId } },
  });
  if (!data) {
    throw new ApiFailure(`balance of ${subscriberId}`, response.status, error);
  }
  return data.data.balances;
}

/** Pages through the event log (newest first) with meta.pagination.next_cursor until has_more is false. */
async function drainEvents(api: Api, limit: number) {
  const byType: Record<string, number> = {};
  let cursor: string | undefined;
  let pages = 0;
  let total = 0;
  for (;;) {
    const { data, error, response } = await api.GET('/api/v1/events', {
      params: { query: { limit, ...(cursor === undefined ? {} : { starting_after: cursor }) } },
    });
    if (!data) {
      throw new ApiFailure('events', response.status, error);
    }
    pages += 1;
    for (const event of data.data) {
      total += 1;
      byType[event.type] = (byType[event.type] ?? 0) + 1;
    }
    const next = data.meta.pagination?.next_cursor;
    if (!data.meta.pagination?.has_more || !next) {
      return { total, pages, by_type: byType };
    }
    cursor = next;
  }
}

async function main(): Promise<void> {
  const api = clientFromEnv();
  const rows = readRows(process.argv[2] ?? new URL('../data/subscribers.csv', import.meta.url).pathname);
  const month = process.env.ISP_SYNC_MONTH ?? new Date().toISOString().slice(0, 7);
  let allocated = 0;
  for (const row of rows) {
    const subscriber = await syncSubscriber(api, row);
    counts.subscribers[subscriber.outcome] += 1;
    const invoice = await ensureInvoice(api, subscriber.id, row, month);
    if (invoice) {
      counts.invoices[invoice.outcome] += 1;
    }
    const payment = await recordPayment(api, subscriber.id, row);
    let transaction: Transaction | undefined;
    if (payment) {
      counts.payments[payment.outcome] += 1;
      const allocation = await allocateOldestFirst(api, payment.transaction);
      transaction = allocation.transaction;
      allocated += allocation.allocatedNow;
    }
    print({
      kind: 'subscriber',
      external_id: row.external_id,
      id: subscriber.id,
      subscriber: subscriber.outcome,
      invoice: invoice?.outcome ?? null,
      payment: payment?.outcome ?? null,
      unallocated: transaction?.unallocated_amount ?? null,
      balances: await balanceOf(api, subscriber.id),
    });
  }
  print({ kind: 'events', ...(await drainEvents(api, Number(process.env.ISP_EVENTS_PAGE_SIZE ?? '100'))) });
  print({ kind: 'summary', rows: rows.length, ...counts, allocated });
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
