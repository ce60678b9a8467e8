import { Client } from 'pg';

/**
 * What every part of the bench's seeding (seed.ts, seed-domain.ts) writes with: ids made in SQL like the app's
 * (src/common/ids.ts: prefix, then a 26-character Crockford-base32 ULID whose first 10 characters are the creation
 * millisecond, so id order is creation order), the timeline rows are spread over, chunked inserts, index rebuilds.
 */

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
export const DAY_MS = 86_400_000;
/** Seeded rows are spread over this much past, oldest first; the newest is an hour ago. */
export const SPREAD_MS = 400 * DAY_MS;
const CHUNK = 200_000;

export const SEED_CURRENCY = 'USD';

/** SQL for `digits` Crockford base-32 characters of the bigint expression `expr` (most significant first). */
function crockford(expr: string, digits: number): string {
  const parts: string[] = [];
  for (let k = digits - 1; k >= 0; k--) {
    parts.push(`substr('${CROCKFORD}', (((${expr}) >> ${5 * k}) & 31)::int + 1, 1)`);
  }
  return parts.join(' || ');
}

/**
 * SQL for a ULID-like id: the millisecond `ms`, then 80 bits derived from md5(salt || g). A scalar subquery whose
 * inner steps are fenced with OFFSET 0, so the hash and the time are computed once per row, not once per character.
 */
export function ulidSql(prefix: string, ms: string, g: string, salt: string): string {
  return `(SELECT '${prefix}_' || ${crockford('ms', 10)} || ${crockford('r1', 8)} || ${crockford('r2', 8)}
     FROM (SELECT (${ms})::bigint AS ms,
                  ('x' || substr(h, 1, 10))::bit(40)::bigint AS r1,
                  ('x' || substr(h, 11, 10))::bit(40)::bigint AS r2
             FROM (SELECT md5('${salt}' || (${g})::text) AS h OFFSET 0) AS hashed OFFSET 0) AS parts)`;
}

export async function inChunks(
  label: string,
  total: number,
  log: (line: string) => void,
  insert: (from: number, to: number) => Promise<void>,
): Promise<void> {
  const started = Date.now();
  for (let from = 1; from <= total; from += CHUNK) {
    const to = Math.min(total, from + CHUNK - 1);
    await insert(from, to);
    log(`  ${label}: ${to.toLocaleString('en-US')} / ${total.toLocaleString('en-US')}`);
  }
  log(`  ${label}: done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

/**
 * Runs `load` with the table's secondary indexes dropped, then re-creates them from their own definitions
 * (pg_indexes.indexdef, so exactly what the migrations made): building an index once over a million sorted rows is
 * several times faster than maintaining it row by row. The primary key stays.
 */
export async function withSecondaryIndexesDropped<T>(
  db: Client,
  table: string,
  log: (line: string) => void,
  load: () => Promise<T>,
): Promise<T> {
  const { rows } = await db.query<{ indexname: string; indexdef: string }>(
    `SELECT i.indexname, i.indexdef FROM pg_indexes i
      WHERE i.schemaname = 'public' AND i.tablename = $1
        AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname)
        -- an index a foreign key points at (services' and billing_periods' (tenant_id, subscriber_id)) stays
        AND NOT EXISTS (SELECT 1 FROM pg_constraint c
                         WHERE c.conindid = ('public.' || quote_ident(i.indexname))::regclass)`,
    [table],
  );
  for (const index of rows) {
    await db.query(`DROP INDEX "${index.indexname}"`);
  }
  const loaded = await load();
  const started = Date.now();
  await db.query(`SET maintenance_work_mem = '256MB'`);
  for (const index of rows) {
    await db.query(index.indexdef);
  }
  log(`  ${table}: ${rows.length} indexes re-created in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return loaded;
}

/**
 * A seeding statement again after a deadlock (SQLSTATE 40P01), up to 5 times: the server under test runs its workers
 * while the bench seeds, and a bulk INSERT's foreign-key checks take KEY SHARE locks on thousands of referenced rows
 * (services, say) in scan order, which the automation's sweeps may be locking FOR UPDATE in another order. Postgres
 * aborts one of the two; the statement rolled back whole, so running it again is safe.
 */
export async function retryingDeadlocks<T>(statement: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await statement();
    } catch (error) {
      if ((error as { code?: string }).code !== '40P01' || attempt >= 5) {
        throw error;
      }
    }
  }
}

/** Row g of the seed is created at startMs + g * stepMs. */
export function timeline(total: number): { startMs: number; stepMs: number } {
  const stepMs = Math.max(1, Math.floor(SPREAD_MS / total));
  return { startMs: Date.now() - DAY_MS / 24 - stepMs * (total + 1), stepMs };
}

/** The id the seed gave subscriber number g (1-based), as SQL over a column or parameter `g`. */
export function seededSubscriberIdSql(g: string, startMs: string, stepMs: string): string {
  return ulidSql('sub', `${startMs}::bigint + (${g})::bigint * ${stepMs}::bigint`, g, 's');
}

export interface SubscriberSeed {
  startMs: number;
  stepMs: number;
  total: number;
}
