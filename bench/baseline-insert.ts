/**
 * The create path's database work shared by baseline (a) (bench/baseline-server.ts) and baseline (c)
 * (bench/framework-floor-server.ts): the same pg pool of the app's size, the same single-row INSERT into
 * `subscribers`, the same parameter mapping and the same small JSON answer, so the two differ only in what serves them.
 * env: DATABASE_URL, POOL_MAX.
 */
import { Pool } from 'pg';
import { newId } from '../src/common/ids';
// The app's own statement text, so the baselines insert exactly as POST /subscribers does.
import { INSERT_SUBSCRIBER } from '../src/subscribers/subscribers.repository';

/** The fields of a create body the INSERT uses (the app's CreateSubscriberDto fits it). */
export interface SubscriberInput {
  external_id?: string;
  full_name?: string;
  email?: string;
  phone?: string;
  status?: string;
  address?: object;
  metadata?: object;
}

/** The pool both baselines use: the app's size (POOL_MAX, as DATABASE_POOL_MAX for the server under test). */
export function baselinePool(): Pool {
  return new Pool({
    connectionString: process.env.DATABASE_URL,
    max: Number(process.env.POOL_MAX ?? 20),
  });
}

/** The INSERT's parameters, $1 … $17, for one row. */
export function subscriberRow(tenantId: string, id: string, body: SubscriberInput, now: Date): unknown[] {
  return [
    tenantId,
    id,
    body.external_id ?? null,
    body.full_name ?? '',
    body.email ?? null,
    body.email ? body.email.toLowerCase() : null,
    body.phone ?? null,
    body.status ?? 'active',
    null,
    null,
    body.address ?? null,
    body.metadata ?? {},
    now,
    now,
    false,
    null,
    null,
  ];
}

/** Inserts one subscriber and returns the small body both baselines answer with (201). */
export async function insertSubscriber(pool: Pool, tenantId: string, body: SubscriberInput): Promise<object> {
  const now = new Date();
  const id = newId('sub', now);
  await pool.query(INSERT_SUBSCRIBER, subscriberRow(tenantId, id, body, now));
  return {
    data: {
      id,
      external_id: body.external_id ?? null,
      full_name: body.full_name,
      created_at: now.toISOString(),
    },
  };
}
