import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import type { Client } from 'pg';
import type { Explained } from './count';
import type { Options } from './options';
import { type EmbeddedDatabase, productionNodeFlags, ROOT, type ServerUnderTest } from './processes';
import { ratiosOf, targetsOf } from './ratios';
import {
  log,
  type Measurement,
  measurementTable,
  type QueryCount,
  ratioTable,
  shortStatement,
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
}

/** The results, the ratios and targets, memory and the plans on stdout; all of it as JSON under bench/results/. */
export async function reportResults(
  db: Client,
  server: ServerUnderTest,
  embedded: EmbeddedDatabase | null,
  run: RunResults,
): Promise<void> {
  const {
    options,
    runStarted,
    resultsDir,
    stamp,
    seededRows,
    deepPosition,
    measurements,
    queryCounts,
    plans,
  } = run;
  const peakRssMb = server.rss.highWaterMb();
  const embeddedRssMb = embedded?.rss.highWaterMb() ?? null;
  const ratios = ratiosOf(measurements, options.connections);
  const targets = targetsOf(ratios, measurements, peakRssMb, options.embedded);

  const { rows: versionRows } = await db.query<{ version: string }>('SELECT version()');
  const git = (args: string[]) => {
    try {
      return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();
    } catch {
      return '';
    }
  };
  const environment = {
    commit: `${git(['rev-parse', '--short', 'HEAD']) || 'unknown'}${git(['status', '--porcelain', 'src']) ? ' + uncommitted src changes' : ''}`,
    node: process.version,
    serverNodeFlags: productionNodeFlags(),
    cpus: `${cpus().length} × ${cpus()[0]?.model ?? '?'}`,
    memoryGb: Math.round(totalmem() / 2 ** 30),
    database: options.embedded ? 'embedded PGlite (own process, via pglite-socket)' : versionRows[0].version,
  };

  log(
    `\nResults (${options.embedded ? 'embedded PGlite' : 'PostgreSQL'}; ${environment.cpus}; node ${process.version} ` +
      `${environment.serverNodeFlags.join(' ')}; ` +
      (options.instances > 1 ? `${options.instances} server instances, connections round-robin; ` : '') +
      `commit ${environment.commit}):`,
  );
  log(measurementTable(measurements));
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
  for (const plan of plans) {
    log(`\nEXPLAIN (ANALYZE, BUFFERS) for ${plan.case} — indexes: ${plan.indexes.join(', ') || 'none'}`);
    log(plan.sql);
    log(plan.plan);
  }

  const file = join(resultsDir, `bench-${stamp}${options.embedded ? '-embedded' : ''}.json`);
  writeFileSync(
    file,
    JSON.stringify(
      {
        startedAt: runStarted.toISOString(),
        finishedAt: new Date().toISOString(),
        options: { ...options, databaseUrl: options.embedded ? 'embedded' : options.databaseUrl },
        environment,
        seededRows,
        deepPosition,
        measurements,
        ratios,
        targets,
        peakRssMb,
        embeddedDatabaseRssMb: embeddedRssMb,
        queryCounts: queryCounts.map((count) => ({
          ...count,
          statements: count.statements.map((s) => ({ ...s, short: shortStatement(s.text) })),
        })),
        plans,
      },
      null,
      2,
    ),
  );
  log(`\nJSON: ${file}`);
}
