/**
 * `accounting.run` (issue #33 item 5): accounting packets through a real FreeRADIUS 3 into the bench's PostgreSQL, as
 * a NAS sends them: `sessions` sessions each Started, given `interims` Interim-Updates with growing counters, and
 * Stopped, replayed by radclient `IN_FLIGHT` requests at a time from 127.0.0.1 (the static client; a client in node
 * was the bottleneck, at a quarter of radclient's rate). FreeRADIUS writes radacct with its stock
 * queries (an INSERT per Start, an UPDATE per Interim-Update and Stop), and the API's trigger adds each packet's octets
 * to radacct_daily_usage. Reported as accounting rows/s (packets answered per second, each one radacct row written),
 * per phase and overall, with the ratio to baseline (a)'s requests/s of the same run (no target), and what a year of
 * 10,000 subscribers with 5-minute interim updates asks of it (33 packets/s). Runs only on PostgreSQL with FreeRADIUS
 * installed (FreeRADIUS cannot read the embedded database); skipped with a line saying why otherwise.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { Client } from 'pg';
import { freeRadiusBinary, startFreeRadius } from '../test/radius/support/freeradius';
import { toBaselineA } from './billing-run';
import { log, type Measurement } from './report';

const SECRET = 'bench-accounting-secret';
/** Requests in flight at once: a busy BNG's accounting burst. */
const IN_FLIGHT = 32;
/** Of 10,000 subscribers with one Interim-Update every 5 minutes: the steady load in packets/s. */
const STEADY_LOAD = 10_000 / 300;

export interface AccountingRunResult {
  sessions: number;
  interims: number;
  packets: number;
  phases: { phase: string; packets: number; seconds: number; rowsPerS: number }[];
  rowsPerS: number;
  baselineRps: number;
  ratio: number;
  /** rowsPerS over the steady load of 10,000 subscribers with 5-minute interim updates. */
  headroom: number;
}

/** radclient (freeradius-utils): the client a NAS's accounting is replayed with, so the figure is FreeRADIUS's. */
function radclientBinary(): string | null {
  for (const dir of [...(process.env.PATH ?? '').split(delimiter), '/usr/bin', '/usr/local/bin']) {
    if (dir && existsSync(join(dir, 'radclient'))) {
      return join(dir, 'radclient');
    }
  }
  return null;
}

/**
 * Sends every packet of `file` to `port`, IN_FLIGHT at a time; a packet unanswered after 2 s is sent again (up to 5
 * times, as a NAS retransmits); answers the seconds it took.
 */
function replay(radclient: string, file: string, port: number): number {
  const started = process.hrtime.bigint();
  // radclient exits non-zero when a packet gets no answer after its tries.
  execFileSync(
    radclient,
    [
      '-q',
      '-c',
      '1',
      '-p',
      String(IN_FLIGHT),
      '-r',
      '5',
      '-t',
      '2',
      '-f',
      file,
      `127.0.0.1:${port}`,
      'acct',
      SECRET,
    ],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  return Number(process.hrtime.bigint() - started) / 1e9;
}

type Status = 'Start' | 'Interim-Update' | 'Stop';
const INTERIMS = 5;

/** One phase's packets as radclient reads them (attribute lines, a blank line between packets), in a file. */
function phaseFile(file: string, run: string, sessions: number, statusType: Status, step: number): string {
  const text = Array.from(
    { length: sessions },
    (_, i) =>
      `Acct-Status-Type = ${statusType}\nUser-Name = "bench-acct-${run}/u${i}"\n` +
      `Acct-Session-Id = "${run}-${i}"\nNAS-IP-Address = 127.0.0.1\nNAS-Port = ${i % 65_536}\n` +
      `Framed-IP-Address = 100.64.${Math.floor(i / 250) % 256}.${(i % 250) + 1}\n` +
      `Acct-Session-Time = ${step * 300}\nAcct-Input-Octets = ${step * 1_000_000}\n` +
      `Acct-Output-Octets = ${step * 5_000_000}\n`,
  ).join('\n');
  writeFileSync(file, text);
  return file;
}

/** Every session in radacct once, stopped, with its last counters, and its daily usage summing to them. */
async function verify(db: Client, run: string, sessions: number): Promise<void> {
  const { rows } = await db.query<{ n: number; open: number; bytes_in: string; usage_in: string }>(
    `SELECT count(*)::int AS n, count(*) FILTER (WHERE acctstoptime IS NULL)::int AS open,
            sum(acctinputoctets)::text AS bytes_in,
            (SELECT sum(bytes_in) FROM radacct_daily_usage WHERE starts_with(username, $1))::text AS usage_in
       FROM radacct WHERE starts_with(username, $1)`,
    [`bench-acct-${run}/`],
  );
  const expectedIn = String(sessions * (INTERIMS + 1) * 1_000_000);
  const [row] = rows;
  if (row.n !== sessions || row.open !== 0 || row.bytes_in !== expectedIn || row.usage_in !== expectedIn) {
    throw new Error(`accounting.run: radacct does not hold what was sent: ${JSON.stringify(row)}`);
  }
}

/** Logs the phases and the run, and writes the result's JSON. */
function report(result: AccountingRunResult, seconds: number, resultsDir: string, stamp: string): void {
  for (const entry of result.phases) {
    log(
      `  ${entry.phase}: ${entry.packets} packets in ${entry.seconds.toFixed(2)} s = ${entry.rowsPerS.toFixed(0)} rows/s`,
    );
  }
  log(
    `accounting.run: ${result.packets.toLocaleString('en-US')} accounting packets (${result.sessions.toLocaleString('en-US')} ` +
      `sessions: Start, ${result.interims} Interim-Updates, Stop) through FreeRADIUS into PostgreSQL in ` +
      `${seconds.toFixed(2)} s = ${result.rowsPerS.toFixed(0)} rows/s; baseline (a) ${result.baselineRps.toFixed(0)} ` +
      `req/s; ratio ${result.ratio.toFixed(2)} (no target); ${result.headroom.toFixed(0)}× the steady load of 10,000 ` +
      `subscribers with 5-minute interim updates (33/s)`,
  );
  writeFileSync(join(resultsDir, `accounting-run-${stamp}.json`), `${JSON.stringify(result, null, 2)}\n`);
}

export async function benchAccountingRun(
  db: Client,
  databaseUrl: string,
  embedded: unknown,
  measurements: Measurement[],
  options: { accountingSessions: number },
  paths: { resultsDir: string; stamp: string },
): Promise<AccountingRunResult | null> {
  const radclient = radclientBinary();
  if (embedded || !freeRadiusBinary() || !radclient) {
    const why = embedded
      ? 'the embedded database: FreeRADIUS reads PostgreSQL only'
      : 'FreeRADIUS (freeradius, freeradius-postgresql, freeradius-utils) is not installed';
    log(`accounting.run: skipped (${why})`);
    return null;
  }
  const sessions = options.accountingSessions;
  const { resultsDir, stamp } = paths;
  const run = Date.now().toString(36);
  const steps: [string, Status, number][] = [
    ['Start (INSERT)', 'Start', 0],
    ...Array.from({ length: INTERIMS }, (_, k): [string, Status, number] => [
      `Interim-Update ${k + 1} (UPDATE)`,
      'Interim-Update',
      k + 1,
    ]),
    ['Stop (UPDATE)', 'Stop', INTERIMS + 1],
  ];
  const plan = steps.map(([phase, status, step], index) => ({
    phase,
    file: phaseFile(join(resultsDir, `accounting-run-${stamp}-${index}.txt`), run, sessions, status, step),
  }));
  const radius = await startFreeRadius({ databaseUrl, clientSecret: SECRET, quiet: true });
  const phases: AccountingRunResult['phases'] = [];
  try {
    for (const { phase, file } of plan) {
      const seconds = replay(radclient, file, radius.acctPort);
      phases.push({ phase, packets: sessions, seconds, rowsPerS: sessions / seconds });
      rmSync(file);
    }
  } finally {
    await radius.stop();
  }
  await verify(db, run, sessions);
  const packets = phases.reduce((sum, entry) => sum + entry.packets, 0);
  const seconds = phases.reduce((sum, entry) => sum + entry.seconds, 0);
  const rowsPerS = packets / seconds;
  const { baselineRps, ratio } = toBaselineA(measurements, rowsPerS);
  const result: AccountingRunResult = {
    sessions,
    interims: INTERIMS,
    packets,
    phases,
    rowsPerS,
    baselineRps,
    ratio,
    headroom: rowsPerS / STEADY_LOAD,
  };
  report(result, seconds, resultsDir, stamp);
  return result;
}
