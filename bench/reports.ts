/**
 * `reports` (issue #32 item 4): each report of GET /reports/* on the seeded tenant (the --rows subscribers, with the
 * services, plan history and invoices bench/seed-reports.ts gives them), measured one request at a time (a report is
 * a back-office read, not a hot path under load), against a 100-row page of the subscriber list measured the same
 * way. Reported as p50/p90/max per report and the ratio of its p50 to the page's (issue #35's target: ≤ 20).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BOOTSTRAP_TOKEN } from './cases';
import type { ServerUnderTest } from './processes';
import { log } from './report';

/** issue #35: a report's p50 at most this many times a 100-row page's. */
export const REPORT_RATIO_TARGET = 20;

export interface ReportLatency {
  name: string;
  path: string;
  samples: number;
  p50Ms: number;
  p90Ms: number;
  maxMs: number;
  /** p50 over the 100-row page's p50. */
  ratio: number;
  met: boolean;
}

function day(offsetDays: number): string {
  return new Date(Date.now() + offsetDays * 86_400_000).toISOString().slice(0, 10);
}

/** The reports as a finance user asks for them: the last twelve months, and the receivables today. */
function reportPaths(): { name: string; path: string }[] {
  const from = `${day(-365).slice(0, 7)}-01`;
  const to = day(0);
  return [
    { name: 'reports.mrr', path: `/api/v1/reports/mrr?from=${from}&to=${to}` },
    { name: 'reports.churn', path: `/api/v1/reports/churn?from=${from}&to=${to}` },
    { name: 'reports.revenue_month', path: `/api/v1/reports/revenue?from=${from}&to=${to}&group_by=month` },
    { name: 'reports.revenue_plan', path: `/api/v1/reports/revenue?from=${from}&to=${to}&group_by=plan` },
    { name: 'reports.aging', path: `/api/v1/reports/receivables-aging?as_of=${to}` },
    { name: 'reports.aging_past', path: `/api/v1/reports/receivables-aging?as_of=${day(-90)}` },
  ];
}

async function timed(server: ServerUnderTest, path: string): Promise<number> {
  const started = performance.now();
  const response = await fetch(`${server.baseUrl}${path}`, {
    headers: { Authorization: `Bearer ${BOOTSTRAP_TOKEN}` },
  });
  await response.arrayBuffer();
  if (!response.ok) {
    throw new Error(`GET ${path}: ${response.status}`);
  }
  return performance.now() - started;
}

/** One warm-up, then `samples` sequential requests: p50, p90 and max in ms. */
async function latency(server: ServerUnderTest, path: string, samples: number) {
  await timed(server, path);
  const times: number[] = [];
  for (let i = 0; i < samples; i++) {
    times.push(await timed(server, path));
  }
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))];
  return { p50: at(0.5), p90: at(0.9), max: times[times.length - 1] };
}

export async function benchReports(
  server: ServerUnderTest,
  seededRows: number,
  samples: number,
  resultsDir: string,
  stamp: string,
): Promise<ReportLatency[]> {
  log(
    `\nreports: each report on ${seededRows.toLocaleString('en-US')} seeded subscribers, ${samples} requests one at a time`,
  );
  const page = await latency(server, '/api/v1/subscribers?limit=100', Math.max(samples, 20));
  log(`  GET /subscribers?limit=100 (the 100-row page): p50 ${page.p50.toFixed(1)} ms`);
  const results: ReportLatency[] = [];
  for (const report of reportPaths()) {
    const measured = await latency(server, report.path, samples);
    const ratio = measured.p50 / page.p50;
    const result: ReportLatency = {
      name: report.name,
      path: report.path,
      samples,
      p50Ms: measured.p50,
      p90Ms: measured.p90,
      maxMs: measured.max,
      ratio,
      met: ratio <= REPORT_RATIO_TARGET,
    };
    results.push(result);
    log(
      `  ${report.name}: p50 ${measured.p50.toFixed(1)} ms, p90 ${measured.p90.toFixed(1)} ms, max ` +
        `${measured.max.toFixed(1)} ms; ${ratio.toFixed(1)}× the page (issue #35 target ≤ ${REPORT_RATIO_TARGET}: ` +
        `${result.met ? 'met' : 'NOT met'})`,
    );
  }
  writeFileSync(
    join(resultsDir, `reports-${stamp}.json`),
    `${JSON.stringify({ seededRows, pageP50Ms: page.p50, reports: results }, null, 2)}\n`,
  );
  return results;
}
