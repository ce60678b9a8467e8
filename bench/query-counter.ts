/**
 * Preloaded into the server under test (`node -r <this file, transpiled> dist/main.js`): counts every statement sent
 * through `pg` (TypeORM's driver, so BEGIN and COMMIT included) by its text, and keeps the last parameters of each,
 * so the bench can report queries per request and EXPLAIN ANALYZE the exact list queries the app sends.
 * The bench asks over the IPC channel: {type: 'bench:queries', reset: boolean} → {type: 'bench:queries', stats}.
 * Costs one Map update per statement; it does not change what the app does.
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type * as Pg from 'pg';

export interface StatementStat {
  text: string;
  count: number;
  params: unknown[] | null;
}

export interface QueryStatsMessage {
  type: 'bench:queries';
  stats: StatementStat[];
}

const load = createRequire(join(process.cwd(), 'package.json'));
const pg = load('pg') as typeof Pg;
const stats = new Map<string, StatementStat>();

type QueryFn = (this: unknown, ...args: unknown[]) => unknown;
const proto = pg.Client.prototype as unknown as { query: QueryFn };
const original = proto.query;

function textOf(arg: unknown): string | null {
  if (typeof arg === 'string') {
    return arg;
  }
  if (arg && typeof arg === 'object' && 'text' in arg && typeof arg.text === 'string') {
    return arg.text;
  }
  return null;
}

function paramsOf(args: unknown[]): unknown[] | null {
  const [first, second] = args;
  if (Array.isArray(second)) {
    return second as unknown[];
  }
  if (first && typeof first === 'object' && 'values' in first && Array.isArray(first.values)) {
    return first.values as unknown[];
  }
  return null;
}

proto.query = function (this: unknown, ...args: unknown[]): unknown {
  const raw = textOf(args[0]);
  if (raw !== null) {
    const text = raw.replace(/\s+/g, ' ').trim();
    const stat = stats.get(text);
    if (stat) {
      stat.count += 1;
      stat.params = paramsOf(args);
    } else {
      stats.set(text, { text, count: 1, params: paramsOf(args) });
    }
  }
  return original.apply(this, args);
};

process.on('message', (message: unknown) => {
  if (!message || typeof message !== 'object' || !('type' in message) || message.type !== 'bench:queries') {
    return;
  }
  const reply: QueryStatsMessage = { type: 'bench:queries', stats: [...stats.values()] };
  if ('reset' in message && message.reset === true) {
    stats.clear();
  }
  process.send?.(reply);
});
