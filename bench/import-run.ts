/**
 * `import.run` (issue #32 item 2, target from issue #35): one tenant of its own, one CSV upload of `rows` new
 * subscribers (every column a migration brings: email, phone, address, metadata) to POST /imports, imported by the
 * worker of the server under test. Reported as rows/s, from the job's created_at to its completed_at (the upload is
 * stored by then; the worker's batches are what is measured), and its ratio to baseline (a)'s requests/s measured in
 * the same run (target ≥ 0.5: an import of new subscribers is at least half as fast as single-row inserts with
 * nothing around them), with the server's peak RSS during the import.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BOOTSTRAP_TOKEN } from './cases';
import { api, toBaselineA } from './billing-run';
import type { ServerUnderTest } from './processes';
import { log, type Measurement } from './report';

export interface ImportRunResult {
  rows: number;
  uploadSeconds: number;
  seconds: number;
  rowsPerS: number;
  baselineRps: number;
  ratio: number;
  peakRssMb: number;
  met: { ratio: boolean };
}

/** The CSV of `rows` new subscribers, ids unique to this run. */
function csvOf(rows: number, tag: string): string {
  const lines = ['external_id,full_name,email,phone,status,address.line1,address.city,metadata.plan'];
  for (let i = 1; i <= rows; i++) {
    lines.push(
      `imp-${tag}-${i},Imported Subscriber ${i},imp${i}.${tag}@example.net,+1415555${String(i % 10000).padStart(4, '0')},active,"${i} Fibre Lane",Springfield,fiber-500`,
    );
  }
  return `${lines.join('\n')}\n`;
}

export async function benchImportRun(
  server: ServerUnderTest,
  measurements: Measurement[],
  rows: number,
  resultsDir: string,
  stamp: string,
): Promise<ImportRunResult> {
  const tag = Date.now().toString(36);
  const tenant = await api(server, '/tenants', {
    method: 'POST',
    body: JSON.stringify({ slug: `bench-import-${tag}`, name: 'Bench import' }),
  });
  const tenantId = tenant.id as string;
  const csv = csvOf(rows, tag);
  log(
    `\nimport.run: uploading ${rows.toLocaleString('en-US')} subscribers (${(csv.length / 1e6).toFixed(1)} MB of CSV)…`,
  );
  server.rss.window();
  const uploadStarted = performance.now();
  const response = await fetch(`${server.baseUrl}/api/v1/imports?kind=subscribers`, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${BOOTSTRAP_TOKEN}`,
      'X-Tenant-ID': tenantId,
      'Content-Type': 'text/csv',
    },
    body: csv,
  });
  const uploadSeconds = (performance.now() - uploadStarted) / 1000;
  const answer = (await response.json()) as { data: Record<string, unknown> };
  if (response.status !== 202) {
    throw new Error(`import.run upload: ${response.status} ${JSON.stringify(answer)}`);
  }
  let job = answer.data;
  while (job.status === 'queued' || job.status === 'running') {
    await new Promise((resolve) => setTimeout(resolve, 250));
    job = await api(server, `/imports/${job.id as string}`, { tenant: tenantId });
  }
  const peakRssMb = server.rss.window();
  if (job.status !== 'completed' || job.created !== rows) {
    throw new Error(`import.run did not create every row: ${JSON.stringify(job)}`);
  }
  const seconds = (Date.parse(job.completed_at as string) - Date.parse(job.created_at as string)) / 1000;
  const rowsPerS = rows / seconds;
  const { baselineRps, ratio } = toBaselineA(measurements, rowsPerS);
  const result: ImportRunResult = {
    rows,
    uploadSeconds,
    seconds,
    rowsPerS,
    baselineRps,
    ratio,
    peakRssMb,
    met: { ratio: ratio >= 0.5 },
  };
  log(
    `import.run: ${rows.toLocaleString('en-US')} subscribers imported in ${seconds.toFixed(1)} s ` +
      `(upload answered in ${uploadSeconds.toFixed(1)} s) = ${rowsPerS.toFixed(0)} rows/s; baseline (a) ` +
      `${baselineRps.toFixed(0)} req/s; ratio ${ratio.toFixed(2)} (target ≥ 0.5: ${result.met.ratio ? 'met' : 'NOT met'}); ` +
      `server peak RSS ${peakRssMb.toFixed(0)} MB`,
  );
  writeFileSync(join(resultsDir, `import-run-${stamp}.json`), `${JSON.stringify(result, null, 2)}\n`);
  return result;
}
