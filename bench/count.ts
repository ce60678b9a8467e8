import type { Client } from 'pg';
import type { BenchCase } from './cases';
import { probe, type ServedBy } from './load';
import type { ServerUnderTest } from './processes';
import type { StatementStat } from './query-counter';
import type { QueryCount } from './report';

/** Sequential requests per case when counting statements. */
const COUNT_REQUESTS = 20;

async function countQueries(
  server: ServerUnderTest,
  benchCase: BenchCase,
): Promise<{
  count: QueryCount;
  stats: StatementStat[];
}> {
  await server.queryStats(true);
  for (let i = 0; i < COUNT_REQUESTS; i++) {
    await probe(benchCase, server.baseUrl);
  }
  // The webhook worker polls on its own clock; its statements are not the request's.
  const stats = (await server.queryStats(true)).filter((stat) => !/SKIP LOCKED/i.test(stat.text));
  const total = stats.reduce((sum, stat) => sum + stat.count, 0);
  return {
    count: {
      case: benchCase.name,
      label: benchCase.label,
      requests: COUNT_REQUESTS,
      perRequest: total / COUNT_REQUESTS,
      statements: stats.map((stat) => ({ text: stat.text, perRequest: stat.count / COUNT_REQUESTS })),
    },
    stats,
  };
}

export interface Explained {
  case: string;
  sql: string;
  params: unknown[];
  plan: string;
  indexes: string[];
}

async function explain(db: Client, benchCase: BenchCase, stats: StatementStat[]): Promise<Explained | null> {
  const table = benchCase.explain;
  // TypeORM quotes the table (`FROM "subscribers"`); the lists Postgres renders name it bare (`FROM subscribers s`).
  const from = new RegExp(`FROM "?${table}"?[\\s)]`);
  const statement = stats.find((stat) => stat.text.startsWith('SELECT') && from.test(stat.text));
  if (!statement) {
    return null;
  }
  const params = statement.params ?? [];
  const { rows } = await db.query<{ 'QUERY PLAN': string }>(
    `EXPLAIN (ANALYZE, BUFFERS) ${statement.text}`,
    params,
  );
  const plan = rows.map((row) => row['QUERY PLAN']).join('\n');
  const indexes = [...new Set([...plan.matchAll(/using "?(\w+)"?/g)].map((match) => match[1]))];
  return { case: benchCase.name, sql: statement.text, params, plan, indexes };
}

/**
 * Every case answers 2xx (on every instance) before it is loaded; then its statements per request (in the first
 * instance), and the list plans.
 */
export async function countAll(
  cases: BenchCase[],
  servedBy: ServedBy,
  server: ServerUnderTest,
  db: Client,
): Promise<{ queryCounts: QueryCount[]; plans: Explained[] }> {
  const queryCounts: QueryCount[] = [];
  const plans: Explained[] = [];
  for (const c of cases) {
    // Every instance of the server under test (--instances) answers it.
    for (const baseUrl of servedBy[c.target].baseUrls) {
      await probe(c, baseUrl);
    }
    if (!c.countQueries) {
      continue;
    }
    const { count, stats } = await countQueries(server, c);
    queryCounts.push(count);
    if (c.explain) {
      const plan = await explain(db, c, stats);
      if (plan) {
        plans.push(plan);
      }
    }
  }
  return { queryCounts, plans };
}
