/**
 * `exports.memory` (issue #32, item 3; issue #35 wants the server's RSS flat, within 20 MB, from 10,000 to
 * 1,000,000 rows): GET /exports/subscribers.csv of the seeded tenant, first its newest 10,000 subscribers
 * (created_gte), then its newest 100,000, then all of them, read as fast as this process takes them. Per size: the
 * records read back, the time, and the server's peak RSS while it streamed; then the growth of the peak from 10,000
 * rows (the target) and from 100,000 (where a bounded stream has reached the collector's headroom). Reported, not
 * asserted.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from 'pg';
import { BOOTSTRAP_TOKEN } from './cases';
import { cursorAt } from './database';
import type { ServerUnderTest } from './processes';
import { log } from './report';

export const EXPORTS_MEMORY_CASE = 'exports.memory';
const SMALL = 10_000;
/** A tenth of the target's size: past it, a bounded stream's peak stops rising (the collector's headroom reached). */
const MEDIUM = 100_000;
/** Issue #35's bound on the growth of the server's RSS from SMALL rows to all of them. */
const FLAT_WITHIN_MB = 20;

export interface ExportRun {
  rows: number;
  records: number;
  megabytes: number;
  seconds: number;
  peakRssMb: number;
}

/** One export, streamed and counted (CRLF ends a record; the seed's cells hold none), the server's RSS sampled. */
async function exportOnce(
  server: ServerUnderTest,
  tenantId: string,
  query: string,
  rows: number,
): Promise<ExportRun> {
  server.rss.window();
  const started = performance.now();
  const response = await fetch(`${server.baseUrl}/api/v1/exports/subscribers.csv${query}`, {
    headers: { Authorization: `Bearer ${BOOTSTRAP_TOKEN}`, 'X-Tenant-ID': tenantId },
  });
  if (!response.ok || !response.body) {
    throw new Error(`export: ${response.status} ${await response.text()}`);
  }
  let lineEnds = 0;
  let bytes = 0;
  let lastByte = 0;
  for await (const chunk of response.body) {
    const data = chunk as Uint8Array;
    bytes += data.length;
    for (let i = 0; i < data.length; i++) {
      if (data[i] === 0x0a && (i > 0 ? data[i - 1] : lastByte) === 0x0d) {
        lineEnds++;
      }
    }
    lastByte = data[data.length - 1] ?? lastByte;
  }
  const seconds = (performance.now() - started) / 1000;
  return { rows, records: lineEnds - 1, megabytes: bytes / 1048576, seconds, peakRssMb: server.rss.window() };
}

export async function benchExportsMemory(
  db: Client,
  server: ServerUnderTest,
  tenantId: string,
  seededRows: number,
  resultsDir: string,
  stamp: string,
): Promise<{ small: ExportRun; medium: ExportRun; all: ExportRun; growthMb: number; met: boolean }> {
  log(
    `\n${EXPORTS_MEMORY_CASE}: GET /exports/subscribers.csv, ${SMALL.toLocaleString('en-US')} rows, ${MEDIUM.toLocaleString('en-US')}, then all (${seededRows.toLocaleString('en-US')} seeded)`,
  );
  // The tenant also holds what the baselines inserted: the rows counted as they are when each export starts.
  const count = async (since: Date | null) => {
    const { rows } = await db.query<{ n: string }>(
      'SELECT count(*) AS n FROM subscribers WHERE tenant_id = $1 AND ($2::timestamptz IS NULL OR created_at >= $2)',
      [tenantId, since],
    );
    return Number(rows[0].n);
  };
  /** The newest `size` subscribers (the list's order is newest first). */
  const newestOnes = async (size: number) => {
    const newest = await cursorAt(db, 'subscribers', tenantId, Math.min(size, seededRows) - 1);
    const since = `?created_gte=${encodeURIComponent(newest.createdAt.toISOString())}`;
    return exportOnce(server, tenantId, since, await count(newest.createdAt));
  };
  const small = await newestOnes(SMALL);
  const medium = await newestOnes(MEDIUM);
  const all = await exportOnce(server, tenantId, '', await count(null));
  const growthMb = all.peakRssMb - small.peakRssMb;
  const met = growthMb <= FLAT_WITHIN_MB && [small, medium, all].every((run) => run.records === run.rows);
  for (const run of [small, medium, all]) {
    log(
      `  ${run.rows.toLocaleString('en-US').padStart(9)} rows: ${run.records.toLocaleString('en-US')} records read back, ` +
        `${run.megabytes.toFixed(1)} MB in ${run.seconds.toFixed(1)} s (${Math.round(run.records / run.seconds).toLocaleString('en-US')} rows/s), ` +
        `server peak RSS ${run.peakRssMb.toFixed(1)} MB`,
    );
  }
  log(
    `  RSS growth from ${small.rows.toLocaleString('en-US')} to ${all.rows.toLocaleString('en-US')} rows: ${growthMb.toFixed(1)} MB ` +
      `(target ≤ ${FLAT_WITHIN_MB} MB, issue #35): ${met ? 'met' : 'NOT met'}; from ` +
      `${medium.rows.toLocaleString('en-US')}: ${(all.peakRssMb - medium.peakRssMb).toFixed(1)} MB`,
  );
  const result = { small, medium, all, growthMb, met };
  writeFileSync(join(resultsDir, `exports-memory-${stamp}.json`), JSON.stringify(result, null, 2));
  return result;
}
