import type autocannon from 'autocannon';
import type { DatabaseWindow } from './db-observer';

export const log = (line: string) => process.stdout.write(`${line}\n`);

export interface Measurement {
  case: string;
  label: string;
  connections: number;
  durationS: number;
  requests: number;
  rps: number;
  latencyMs: { p50: number; p99: number; max: number; mean: number };
  errors: number;
  timeouts: number;
  non2xx: number;
  status5xx: number;
  status4xx: number;
  statusCodes: Record<string, number>;
  /** Peak resident memory of the server under test during this measurement (baselines (a) and (c): of the app, idle). */
  serverRssMb: number;
  /**
   * CPU used during the measurement, in cores (1 = one core busy the whole time) and in ms per request: by the process
   * that served it (the app, baseline (a) or baseline (c)), by the database (every postgres process, or the PGlite process), and by
   * the load generator (this process). On a small shared machine these explain a ceiling better than req/s alone.
   */
  cpu: CpuUse;
  /**
   * Postgres only (bench/db-observer.ts): the lock waits sampled in the window, and with --own-cluster its statements
   * (pg_stat_statements). Absent in results written before they were measured.
   */
  database?: DatabaseWindow | null;
  /** When anything failed: the status and start of the body of one more request made right after. */
  failureSample?: string;
}

export interface CpuUse {
  serverCores: number;
  databaseCores: number;
  loadGeneratorCores: number;
  serverMsPerRequest: number;
  databaseMsPerRequest: number;
}

export interface CpuSnapshot {
  server: number;
  /** By pid: processes that come and go are counted for the part of the window they lived in. */
  database: Map<number, number>;
  loadGenerator: number;
  at: number;
}

export function cpuUse(before: CpuSnapshot, after: CpuSnapshot, requests: number): CpuUse {
  const wallMs = Math.max(1, after.at - before.at);
  let databaseMs = 0;
  for (const [pid, ms] of after.database) {
    databaseMs += Math.max(0, ms - (before.database.get(pid) ?? 0));
  }
  const serverMs = after.server - before.server;
  return {
    serverCores: serverMs / wallMs,
    databaseCores: databaseMs / wallMs,
    loadGeneratorCores: (after.loadGenerator - before.loadGenerator) / wallMs,
    serverMsPerRequest: requests > 0 ? serverMs / requests : 0,
    databaseMsPerRequest: requests > 0 ? databaseMs / requests : 0,
  };
}

export function measurementOf(
  name: string,
  label: string,
  connections: number,
  result: autocannon.Result,
  serverRssMb: number,
  cpu: CpuUse,
  database: DatabaseWindow | null = null,
): Measurement {
  const codes: Record<string, number> = {};
  for (const [code, { count }] of Object.entries(result.statusCodeStats ?? {})) {
    codes[code] = count ?? 0;
  }
  return {
    case: name,
    label,
    connections,
    durationS: result.duration,
    requests: result.requests.total,
    rps: result.requests.total / result.duration,
    latencyMs: {
      p50: result.latency.p50,
      p99: result.latency.p99,
      max: result.latency.max,
      mean: result.latency.mean,
    },
    errors: result.errors,
    timeouts: result.timeouts,
    non2xx: result.non2xx,
    status5xx: result['5xx'],
    status4xx: result['4xx'],
    statusCodes: codes,
    serverRssMb,
    cpu,
    database,
  };
}

function pad(cells: string[][]): string {
  const widths = cells[0].map((_, column) => Math.max(...cells.map((row) => row[column].length)));
  const line = (row: string[]) =>
    `| ${row.map((cell, column) => (column <= 1 ? cell.padEnd(widths[column]) : cell.padStart(widths[column]))).join(' | ')} |`;
  const rule = `|${widths.map((width, column) => (column <= 1 ? ':' : '-') + '-'.repeat(width) + (column <= 1 ? '-' : ':')).join('|')}|`;
  return [line(cells[0]), rule, ...cells.slice(1).map(line)].join('\n');
}

const fixed = (value: number, digits = 1) => value.toFixed(digits);

const percent = (share: number) => (share * 100).toFixed(0);

/**
 * The measurements as a Markdown table (it reads in a terminal and pastes into docs/performance.md). On Postgres, the
 * lock-wait columns: `db act` active backends per sample, `wait %` of them waiting on any event, `lock %` on a
 * heavyweight lock, `top wait` the most frequent event and its share (a lock: with the statement most often waiting).
 */
export function measurementTable(measurements: Measurement[]): string {
  const waits = measurements.some((m) => m.database);
  const header = [
    'case',
    'conns',
    'req/s',
    'p50 ms',
    'p99 ms',
    'max ms',
    'errors',
    'non-2xx',
    '5xx',
    'RSS MB',
    'CPU srv/db/gen',
    'srv ms/req',
    'db ms/req',
    ...(waits ? ['db act', 'wait %', 'lock %', 'top wait'] : []),
  ];
  const rows = measurements.map((m) => [
    m.label,
    String(m.connections),
    fixed(m.rps, 0),
    fixed(m.latencyMs.p50, 0),
    fixed(m.latencyMs.p99, 0),
    fixed(m.latencyMs.max, 0),
    String(m.errors + m.timeouts),
    String(m.non2xx),
    String(m.status5xx),
    fixed(m.serverRssMb, 0),
    `${fixed(m.cpu.serverCores, 2)}/${fixed(m.cpu.databaseCores, 2)}/${fixed(m.cpu.loadGeneratorCores, 2)}`,
    fixed(m.cpu.serverMsPerRequest, 2),
    fixed(m.cpu.databaseMsPerRequest, 2),
    ...(waits ? lockWaitCells(m) : []),
  ]);
  return pad([header, ...rows]);
}

function lockWaitCells(m: Measurement): string[] {
  const waits = m.database?.lockWaits;
  if (!waits) {
    return ['—', '—', '—', '—'];
  }
  const top = waits.top[0];
  // The statement most often seen waiting on a lock, when the top wait is a lock.
  const locked = top?.event.startsWith('Lock:') ? waits.lockedStatements[0] : undefined;
  return [
    fixed(waits.meanActive, 1),
    percent(waits.waitingShare),
    percent(waits.lockShare),
    top ? `${top.event} ${percent(top.share)} %${locked ? ` (${locked.statement})` : ''}` : '—',
  ];
}

/**
 * --own-cluster: per measurement, the database's statements per request and execution time per request
 * (pg_stat_statements over the window), and the statements that took most of that time.
 */
export function statementsTable(measurements: Measurement[], top = 4): string {
  const header = [
    'case',
    'conns',
    'stmts/req',
    'exec ms/req',
    'top statements by time: share, calls/req, mean ms',
  ];
  const rows = measurements
    .filter((m) => m.database?.statements)
    .map((m) => {
      const statements = m.database!.statements!;
      return [
        m.label,
        String(m.connections),
        fixed(statements.statementsPerRequest, 2),
        fixed(statements.execMsPerRequest, 2),
        statements.top
          .slice(0, top)
          .map(
            (s) =>
              `${percent(s.share)} % ${shortStatement(s.query)} ${fixed(s.callsPerRequest, 2)}× ${fixed(s.meanMs, 2)} ms`,
          )
          .join('; '),
      ];
    });
  return pad([header, ...rows]);
}

export interface Ratio {
  name: string;
  connections: number;
  value: number;
  /** The target bound and its direction, when this ratio has one. */
  target: { op: '>=' | '<='; bound: number } | null;
  met: boolean | null;
  detail: string;
}

export interface Target {
  name: string;
  value: string;
  bound: string;
  met: boolean | null;
}

export function ratioTable(ratios: Ratio[]): string {
  const header = ['ratio', 'conns', 'value', 'target', 'met', 'from'];
  const rows = ratios.map((r) => [
    r.name,
    String(r.connections),
    fixed(r.value, 2),
    r.target ? `${r.target.op} ${r.target.bound}` : '—',
    r.met === null ? '—' : r.met ? 'yes' : 'NO',
    r.detail,
  ]);
  return pad([header, ...rows]);
}

export function targetTable(targets: Target[]): string {
  const header = ['target (64 connections)', 'bound', 'measured', 'met'];
  const rows = targets.map((t) => [t.name, t.bound, t.value, t.met === null ? '—' : t.met ? 'yes' : 'NO']);
  return pad([header, ...rows]);
}

export interface QueryCount {
  case: string;
  label: string;
  requests: number;
  perRequest: number;
  statements: { text: string; perRequest: number }[];
}

export function queryTable(counts: QueryCount[]): string {
  const header = ['case', 'queries/request', 'statements (per request)'];
  const rows = counts.map((c) => [
    c.label,
    fixed(c.perRequest, 2),
    c.statements.map((s) => `${fixed(s.perRequest, 2)}× ${shortStatement(s.text)}`).join('; '),
  ]);
  return pad([header, ...rows]);
}

/** A statement's verb and main table, e.g. `SELECT api_tokens` or `INSERT subscribers`. */
export function shortStatement(text: string): string {
  const verb = /^\s*(\w+)/.exec(text)?.[1]?.toUpperCase() ?? '?';
  if (['START', 'BEGIN', 'COMMIT', 'ROLLBACK'].includes(verb)) {
    return verb === 'START' ? 'BEGIN' : verb;
  }
  const table = /\b(?:FROM|INTO|UPDATE)\s+"?(\w+)"?/i.exec(text)?.[1] ?? '';
  const lock = /FOR UPDATE|FOR NO KEY UPDATE/i.test(text) ? ' FOR UPDATE' : '';
  const upsert = /ON CONFLICT/i.test(text) ? ' ON CONFLICT' : '';
  return `${verb} ${table}${lock}${upsert}`.trim();
}
