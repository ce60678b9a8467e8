import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import type { Client } from 'pg';
import type { Explained } from './count';
import type { DocumentsPdfResult } from './documents-pdf';
import type { Options } from './options';
import { type EmbeddedDatabase, productionNodeFlags, ROOT, type ServerUnderTest } from './processes';
import { ratiosOf, targetsOf } from './ratios';
import type { ServerSetup } from './server-setup';
import {
  log,
  type Measurement,
  measurementTable,
  type QueryCount,
  type Ratio,
  ratioTable,
  shortStatement,
  statementsTable,
  type Target,
  targetTable,
} from './report';

/** What one run measured, to report. */
export interface RunResults {
  options: Options;
  runStarted: Date;
  resultsDir: string;
  stamp: string;
  seededRows: number;
  deepPosition: number;
  measurements: Measurement[];
  queryCounts: QueryCount[];
  plans: Explained[];
  /** documents.pdf (issue 29), when it ran. */
  documents: DocumentsPdfResult | null;
  /** The rate limit's store, the workers and the database the servers ran with. */
  setup: ServerSetup;
}

/** The results, the ratios and targets, memory and the plans on stdout; all of it as JSON under bench/results/. */
export async function reportResults(
  db: Client,
  server: ServerUnderTest,
  embedded: EmbeddedDatabase | null,
  run: RunResults,
): Promise<void> {
  const { options, measurements } = run;
  const peakRssMb = server.rss.highWaterMb();
  const embeddedRssMb = embedded?.rss.highWaterMb() ?? null;
  const ratios = ratiosOf(measurements, options.connections);
  const targets = targetsOf(ratios, measurements, peakRssMb, options.embedded);
  const environment = await environmentOf(db, options);
  const report: Report = { run, environment, ratios, targets, peakRssMb, embeddedRssMb };
  printReport(report);
  writeReport(report);
}

/** What the report holds beside the run's own results. */
interface Report {
  run: RunResults;
  environment: Environment;
  ratios: Ratio[];
  targets: Target[];
  peakRssMb: number;
  embeddedRssMb: number | null;
}

type Environment = Awaited<ReturnType<typeof environmentOf>>;

/** What the numbers were measured on: the commit, node and its flags, the machine, the database. */
async function environmentOf(db: Client, options: Options) {
  const { rows: versionRows } = await db.query<{ version: string }>('SELECT version()');
  const git = (args: string[]) => {
    try {
      return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();
    } catch {
      return '';
    }
  };
  return {
    commit: `${git(['rev-parse', '--short', 'HEAD']) || 'unknown'}${git(['status', '--porcelain', 'src']) ? ' + uncommitted src changes' : ''}`,
    node: process.version,
    serverNodeFlags: productionNodeFlags(),
    cpus: `${cpus().length} × ${cpus()[0]?.model ?? '?'}`,
    memoryGb: Math.round(totalmem() / 2 ** 30),
    database: options.embedded ? 'embedded PGlite (own process, via pglite-socket)' : versionRows[0].version,
  };
}

/** The report on stdout: the measurements, ratios, targets, memory, the PDF rate and the plans. */
function printReport({ run, environment, ratios, targets, peakRssMb, embeddedRssMb }: Report): void {
  const { options, measurements, documents, plans } = run;
  log(
    `\nResults (${options.embedded ? 'embedded PGlite' : 'PostgreSQL'}; ${environment.cpus}; node ${process.version} ` +
      `${environment.serverNodeFlags.join(' ')}; ` +
      (options.instances > 1 ? `${options.instances} server instances, connections round-robin; ` : '') +
      `commit ${environment.commit}):`,
  );
  log(`Rate limit: ${run.setup.rateLimit}`);
  log(`Workers: ${run.setup.workers}`);
  log(`Database: ${run.setup.database}`);
  log(measurementTable(measurements));
  if (measurements.some((m) => m.database?.statements)) {
    log('\nDatabase statements per request under load (pg_stat_statements, every process on the database):');
    log(statementsTable(measurements));
  }
  log('\nRatios (same run):');
  log(ratioTable(ratios));
  log(
    `\nTargets${options.embedded ? ' (informational on the embedded database; they apply to the real Postgres)' : ''}:`,
  );
  log(targetTable(targets));
  log(
    `\nServer peak RSS (VmHWM, whole run${options.instances > 1 ? ', the largest instance' : ''}): ${peakRssMb.toFixed(0)} MB` +
      (embeddedRssMb !== null ? `; the PGlite process: ${embeddedRssMb.toFixed(0)} MB` : ''),
  );
  if (documents) {
    log(
      `\nInvoice PDFs (issue 29, no target yet): ${documents.invoicesPerS.toFixed(1)}/s against ` +
        `${documents.emptyPerS.toFixed(0)} empty one-page pdfkit documents/s, ratio ${documents.ratio.toFixed(3)}`,
    );
  }
  for (const plan of plans) {
    log(`\nEXPLAIN (ANALYZE, BUFFERS) for ${plan.case} — indexes: ${plan.indexes.join(', ') || 'none'}`);
    log(plan.sql);
    log(plan.plan);
  }
}

/** All of the report as JSON under bench/results/ (the database URL left out). */
function writeReport({ run, environment, ratios, targets, peakRssMb, embeddedRssMb }: Report): void {
  const { options } = run;
  const file = join(run.resultsDir, `bench-${run.stamp}${options.embedded ? '-embedded' : ''}.json`);
  writeFileSync(
    file,
    JSON.stringify(
      {
        startedAt: run.runStarted.toISOString(),
        finishedAt: new Date().toISOString(),
        options: {
          ...options,
          databaseUrl: options.embedded ? 'embedded' : options.databaseUrl,
          redisUrl: options.redisUrl.replace(/\/\/[^@/]*@/, '//…@'),
        },
        environment,
        seededRows: run.seededRows,
        deepPosition: run.deepPosition,
        measurements: run.measurements,
        ratios,
        targets,
        peakRssMb,
        embeddedDatabaseRssMb: embeddedRssMb,
        queryCounts: run.queryCounts.map((count) => ({
          ...count,
          statements: count.statements.map((s) => ({ ...s, short: shortStatement(s.text) })),
        })),
        plans: run.plans,
        documents: run.documents,
        setup: run.setup,
      },
      null,
      2,
    ),
  );
  log(`\nJSON: ${file}`);
}
