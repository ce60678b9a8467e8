import { Client } from 'pg';
import { postgresCpuMs } from './process-stats';
import { shortStatement } from './report';

/**
 * What the database did during each measurement window, beside its CPU (issue #35: "statements and lock waits per
 * request, in the report"):
 *  - lock waits: pg_stat_activity of the bench database sampled every SAMPLE_MS; of the samples of active client
 *    backends (running a statement), the share waiting on anything, on a heavyweight lock (`Lock:*`), and the most
 *    frequent wait events. Needs no server configuration.
 *  - statements (--own-cluster only): pg_stat_statements, reset right before the window and read right after it:
 *    statements per request, execution time per request, and the statements that took most of it. Every process on
 *    the database counts (every instance, its workers, the baselines' pools), not only the first instance's requests.
 */

const SAMPLE_MS = 50;
const TOP_EVENTS = 3;
const TOP_STATEMENTS = 8;

export interface LockWaits {
  /** pg_stat_activity samples taken in the window. */
  samples: number;
  /** Active client backends per sample, on average (how many statements were running at once). */
  meanActive: number;
  /** Of the active backends sampled, the share waiting on any wait event (a lock, I/O, WAL, LWLock, …). */
  waitingShare: number;
  /** Of the active backends sampled, the share waiting on a heavyweight lock (wait_event_type `Lock`). */
  lockShare: number;
  /** The most frequent wait events (`type:event`), each with its share of the active backends sampled. */
  top: { event: string; share: number }[];
  /** The statements seen waiting on a heavyweight lock (verb and table), each with its share of the active samples. */
  lockedStatements: { statement: string; share: number }[];
}

export interface StatementShare {
  query: string;
  callsPerRequest: number;
  meanMs: number;
  /** This statement's share of the window's total execution time. */
  share: number;
}

export interface StatementsWindow {
  statementsPerRequest: number;
  /** Execution time (pg_stat_statements total_exec_time, lock waits inside a statement included) per request. */
  execMsPerRequest: number;
  top: StatementShare[];
}

export interface DatabaseWindow {
  lockWaits: LockWaits;
  statements: StatementsWindow | null;
}

const SAMPLE_SQL = `
  SELECT coalesce(wait_event_type || ':' || wait_event, '') AS event,
    CASE WHEN wait_event_type = 'Lock' THEN left(query, 400) END AS query
  FROM pg_stat_activity
  WHERE datname = current_database() AND backend_type = 'client backend' AND state = 'active'
    AND pid <> pg_backend_pid()`;

export class DatabaseObserver {
  private sampling: Promise<void> | null = null;
  private running = false;
  private samples = 0;
  private readonly events = new Map<string, number>();
  private readonly locked = new Map<string, number>();

  private constructor(
    private readonly sampler: Client,
    /** A client on the `postgres` database of the own cluster, where pg_stat_statements is; null without it. */
    private readonly statements: Client | null,
    private readonly databaseName: string,
    private readonly postmasterPid: number | undefined,
  ) {}

  /** `postmasterPid` when the database is the bench's own cluster: pg_stat_statements is there, and its CPU alone. */
  static async open(databaseUrl: string, postmasterPid?: number): Promise<DatabaseObserver> {
    const sampler = new Client({ connectionString: databaseUrl, application_name: 'bench-observer' });
    await sampler.connect();
    let statements: Client | null = null;
    if (postmasterPid !== undefined) {
      const admin = new URL(databaseUrl);
      admin.pathname = '/postgres';
      statements = new Client({ connectionString: admin.toString(), application_name: 'bench-observer' });
      await statements.connect();
    }
    const name = decodeURIComponent(new URL(databaseUrl).pathname.replace(/^\//, ''));
    return new DatabaseObserver(sampler, statements, name, postmasterPid);
  }

  /** Whether per-statement figures are read (pg_stat_statements of the own cluster). */
  get hasStatements(): boolean {
    return this.statements !== null;
  }

  /** CPU ms by pid of the database's processes: the own cluster's alone, else every `postgres` on the machine. */
  cpuMs(): Map<number, number> {
    return postgresCpuMs(this.postmasterPid);
  }

  /** Right before a window: statements reset, sampling started. */
  async start(): Promise<void> {
    if (this.statements) {
      await this.statements.query('SELECT pg_stat_statements_reset()');
    }
    this.samples = 0;
    this.events.clear();
    this.locked.clear();
    this.running = true;
    this.sampling = this.sample();
  }

  /** Right after it: what the window's `requests` cost the database. */
  async stop(requests: number): Promise<DatabaseWindow> {
    this.running = false;
    await this.sampling;
    const statements = this.statements ? await this.readStatements(requests) : null;
    return { lockWaits: this.lockWaits(), statements };
  }

  async close(): Promise<void> {
    this.running = false;
    await this.sampling;
    await this.sampler.end().catch(() => undefined);
    await this.statements?.end().catch(() => undefined);
  }

  private async sample(): Promise<void> {
    while (this.running) {
      const started = Date.now();
      let rows: { event: string; query: string | null }[];
      try {
        ({ rows } = await this.sampler.query<{ event: string; query: string | null }>(SAMPLE_SQL));
      } catch {
        // the database went away (the run is failing anyway): the window keeps the samples it has
        return;
      }
      this.samples += 1;
      for (const row of rows) {
        this.events.set(row.event, (this.events.get(row.event) ?? 0) + 1);
        if (row.query !== null) {
          const statement = shortStatement(row.query);
          this.locked.set(statement, (this.locked.get(statement) ?? 0) + 1);
        }
      }
      const wait = SAMPLE_MS - (Date.now() - started);
      if (wait > 0 && this.running) {
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
    }
  }

  private lockWaits(): LockWaits {
    let active = 0;
    let waiting = 0;
    let locks = 0;
    for (const [event, n] of this.events) {
      active += n;
      if (event !== '') {
        waiting += n;
      }
      if (event.startsWith('Lock:')) {
        locks += n;
      }
    }
    const share = (n: number) => (active > 0 ? n / active : 0);
    const top = [...this.events]
      .filter(([event]) => event !== '')
      .sort((a, b) => b[1] - a[1])
      .slice(0, TOP_EVENTS)
      .map(([event, n]) => ({ event, share: share(n) }));
    const lockedStatements = [...this.locked]
      .sort((a, b) => b[1] - a[1])
      .slice(0, TOP_EVENTS)
      .map(([statement, n]) => ({ statement, share: share(n) }));
    return {
      lockedStatements,
      samples: this.samples,
      meanActive: this.samples > 0 ? active / this.samples : 0,
      waitingShare: share(waiting),
      lockShare: share(locks),
      top,
    };
  }

  private async readStatements(requests: number): Promise<StatementsWindow> {
    const { rows } = await this.statements!.query<{ query: string; calls: string; total: number }>(
      `SELECT s.query, s.calls, s.total_exec_time AS total
       FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
       WHERE d.datname = $1 AND s.query NOT LIKE '%pg_stat_activity%'
       ORDER BY s.total_exec_time DESC`,
      [this.databaseName],
    );
    const calls = rows.reduce((sum, row) => sum + Number(row.calls), 0);
    const totalMs = rows.reduce((sum, row) => sum + row.total, 0);
    const perRequest = (n: number) => (requests > 0 ? n / requests : 0);
    return {
      statementsPerRequest: perRequest(calls),
      execMsPerRequest: perRequest(totalMs),
      top: rows.slice(0, TOP_STATEMENTS).map((row) => ({
        query: row.query.replace(/\s+/g, ' ').trim(),
        callsPerRequest: perRequest(Number(row.calls)),
        meanMs: Number(row.calls) > 0 ? row.total / Number(row.calls) : 0,
        share: totalMs > 0 ? row.total / totalMs : 0,
      })),
    };
  }
}
