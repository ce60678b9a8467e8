/**
 * The contract through a second generator (@hey-api/openapi-ts): create a subscriber, walk the subscriber list page by
 * page, allocate a payment in one of its three forms, and type a webhook delivery. It only has to compile under
 * --strict (run.sh): a document change that breaks this client's types fails CI. The lines marked @ts-expect-error
 * prove that the document's `oneOf` keeps the wrong allocate bodies from compiling.
 */
import { client } from './client/client.gen';
import { allocateTransaction, createSubscriber, listSubscribers } from './client/sdk.gen';
import type { Allocate, InvoiceEventPayload, Subscriber } from './client/types.gen';

export function configure(baseUrl: string, token: string): void {
  client.setConfig({ baseUrl, auth: () => token });
}

export async function createOne(): Promise<Subscriber['id']> {
  const { data, error } = await createSubscriber({
    body: { full_name: 'Ada Lovelace', status: 'prospect', email: 'ada@example.net' },
    headers: { 'X-Idempotency-Key': 'heyapi-example-ada' },
  });
  if (error) {
    throw new Error(`${error.error.code}: ${error.error.message}`);
  }
  return data.data.id;
}

/** Every subscriber, following `meta.pagination.next_cursor` until `has_more` is false. */
export async function listAll(): Promise<Subscriber[]> {
  const all: Subscriber[] = [];
  let cursor: string | undefined;
  for (;;) {
    const { data, error } = await listSubscribers({ query: { limit: 100, starting_after: cursor } });
    if (error) {
      throw new Error(`${error.error.code}: ${error.error.message}`);
    }
    all.push(...data.data);
    const { has_more, next_cursor } = data.meta.pagination;
    if (!has_more || next_cursor === null) {
      return all;
    }
    cursor = next_cursor;
  }
}

export async function payOldestFirst(transactionId: string): Promise<number> {
  const body: Allocate = { strategy: 'oldest_first' };
  const { data, error } = await allocateTransaction({ path: { transaction_id: transactionId }, body });
  if (error) {
    throw new Error(`${error.error.code}: ${error.error.message}`);
  }
  // null only on a debit or a refund, which are never allocated: an allocation answers a payment or a credit.
  return data.data.unallocated_amount ?? 0;
}

export const toBalance: Allocate = { target: 'balance', amount: 1000 };
export const toInvoices: Allocate = {
  allocations: [{ invoice_id: 'inv_01JD3Z6W3R4T5Y6U7I8O9P0QAB', amount: 2500 }],
};
// @ts-expect-error no form at all: the server answers 422 validation_failed
export const none: Allocate = {};
// @ts-expect-error target without its amount: the server answers 400 missing_field
export const noAmount: Allocate = { target: 'balance' };

/** A webhook receiver's view of an invoice event: `data.object` is typed as the Invoice. */
export function amountDue(delivery: InvoiceEventPayload): number {
  return delivery.type === 'invoice.paid' ? 0 : delivery.data.object.amount_due;
}
