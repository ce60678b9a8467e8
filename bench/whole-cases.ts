/**
 * `npm run bench`'s cases measured as a whole after the table of the load cases (bench/run.ts): export memory, the
 * bill run alone and beside the API's load, the reports, provisioning, import and accounting, each when `--only`
 * names it or no `--only` is given.
 */
import { Client } from 'pg';
import { benchAccountingRun } from './accounting-run';
import { benchBillingMixed, BILLING_MIXED_CASE } from './billing-mixed';
import { benchBillingRun } from './billing-run';
import { buildCases, type Fixtures } from './cases';
import { benchExportsMemory, EXPORTS_MEMORY_CASE } from './exports-memory';
import { benchImportRun } from './import-run';
import { type measure } from './load';
import { type Options } from './options';
import { type EmbeddedDatabase, type ServerUnderTest } from './processes';
import { benchProvisioningRun } from './provisioning-run';
import { benchReports } from './reports';

/** The cases measured as a whole after the table: export memory, the bill runs, reports, provisioning, import, accounting. */
export async function wholeCases(at: {
  db: Client;
  server: ServerUnderTest;
  databaseUrl: string;
  embedded: EmbeddedDatabase | null;
  options: Options;
  paths: { runStarted: Date; resultsDir: string; stamp: string; profileDir: string | null };
  fixtures: Fixtures;
  seededRows: number;
  measurements: Awaited<ReturnType<typeof measure>>;
}): Promise<void> {
  const { db, server, databaseUrl, embedded, options, paths, fixtures, seededRows, measurements } = at;
  const { resultsDir, stamp } = paths;
  if (!options.only || options.only.includes(EXPORTS_MEMORY_CASE)) {
    await benchExportsMemory(db, server, fixtures.tenantId, seededRows, resultsDir, stamp);
  }
  if (!options.only || options.only.includes('billing.run')) {
    await benchBillingRun(db, server, measurements, options.billingSubscribers, resultsDir, stamp);
  }
  if (!options.only || options.only.includes(BILLING_MIXED_CASE)) {
    await mixedCase(db, server, fixtures, options, paths);
  }
  if (!options.only || options.only.includes('reports')) {
    await benchReports(server, seededRows, options.quick ? 5 : 20, resultsDir, stamp);
  }
  if (!options.only || options.only.includes('provisioning.run')) {
    await benchProvisioningRun(db, server, measurements, options.provisioningOrders, resultsDir, stamp);
  }
  if (!options.only || options.only.includes('import.run')) {
    await benchImportRun(server, measurements, options.importRows, resultsDir, stamp);
  }
  if (!options.only || options.only.includes('accounting.run')) {
    await benchAccountingRun(db, databaseUrl, embedded, measurements, options, paths);
  }
}

/** billing.mixed: the API's mixed load (subscribers.get and subscribers.create of bench/cases.ts) beside a bill run. */
async function mixedCase(
  db: Client,
  server: ServerUnderTest,
  fixtures: Fixtures,
  options: Options,
  paths: { resultsDir: string; stamp: string },
): Promise<void> {
  const fresh = buildCases(fixtures);
  await benchBillingMixed(
    db,
    server,
    {
      get: fresh.find((c) => c.name === 'subscribers.get')!,
      create: fresh.find((c) => c.name === 'subscribers.create')!,
    },
    options.mixedSubscribers,
    options.mixedRate,
    options.durationS,
    paths.resultsDir,
    paths.stamp,
  );
}
