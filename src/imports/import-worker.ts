import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { Clock } from '../common/clock';
import { ApiError } from '../common/errors/api-error';
import { PolledWorker } from '../common/polled-worker';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { TransactionRunner, type Tx } from '../database/transaction-runner';
import { EventsService } from '../events';
import { OpeningBalanceImportsService, type OpeningBalanceImportRow } from '../billing';
import { ServiceImportsService, type ServiceImportRow } from '../provisioning';
import { SubscriberImportsService, type SubscriberImportRow } from '../subscribers';
import { ImportDto } from './dto/import.dto';
import { ImportJob, ImportKind, ImportRow, ImportRowError, ImportStatus } from './import.entity';
import { rowKey, validateRow } from './import-rows';
import { type BatchFigures, ImportsRepository } from './imports.repository';

/** A row's outcome as its kind's import service answers it: what it did, or why it was refused. */
export type ImportResult =
  { row: number; outcome: 'created' | 'updated' | 'unchanged' } | { row: number; error: ApiError };

/** A validated row: its number in the file and its kind's body (KINDS[kind].dto, its key present). */
interface ValidRow {
  row: number;
  dto: object;
}

/**
 * How a kind's batch is written: its domain's import service, in the batch's transaction, which makes each record as
 * that domain's API does (the same code path, the same events) and answers one result per row.
 */
type KindWriter = (tx: Tx, tenantId: string, rows: ValidRow[]) => Promise<ImportResult[]>;

/** Thrown to roll a dry run's batch back once its results are known. */
class DryRunDone extends Error {
  constructor(readonly results: ImportResult[]) {
    super('dry run');
  }
}

/**
 * A row's refusal as stored: the row number (zero-padded: the page's key), its key (external_id; an opening
 * balance's subscriber_external_id), field, code and why.
 */
function rowError(
  job: ImportJob,
  row: number,
  data: Record<string, unknown> | null,
  error: ApiError,
  at: Date,
) {
  return Object.assign(new ImportRowError(), {
    tenantId: job.tenantId,
    importId: job.id,
    id: String(row).padStart(9, '0'),
    row,
    externalId: rowKey(job.kind, data),
    field: error.field,
    code: error.code,
    message: error.message,
    createdAt: at,
  });
}

/**
 * Carries out imports. Each pass claims a queued or running job with a lease it renews per batch, and works through
 * its stored rows in batches: each batch's records, refused rows, figures and cursor (rows_done) commit together, so
 * a job whose instance died is taken up by another once the lease runs out and goes on at the next batch; a batch
 * done again after a crash finds its rows' external_ids and creates nothing twice.
 */
@Injectable()
export class ImportWorker extends PolledWorker {
  private readonly writers: Record<ImportKind, KindWriter>;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly clock: Clock,
    private readonly transactionRunner: TransactionRunner,
    private readonly events: EventsService,
    private readonly imports: ImportsRepository,
    subscribers: SubscriberImportsService,
    services: ServiceImportsService,
    openingBalances: OpeningBalanceImportsService,
  ) {
    super('ImportWorker', 'import pass failed');
    // Each row's dto is its kind's body class (validateRow answers KINDS[kind].dto).
    this.writers = {
      [ImportKind.Subscribers]: (tx, tenantId, rows) =>
        subscribers.importBatch(tx, tenantId, rows as SubscriberImportRow[]),
      [ImportKind.Services]: (tx, tenantId, rows) =>
        services.importBatch(tx, tenantId, rows as ServiceImportRow[]),
      [ImportKind.OpeningBalances]: (tx, tenantId, rows) =>
        openingBalances.importBatch(tx, tenantId, rows as OpeningBalanceImportRow[]),
    };
  }

  protected pollMs(): number | null {
    return this.config.imports.workerEnabled ? this.config.imports.pollMs : null;
  }

  protected async pass(): Promise<void> {
    await this.imports.discardAbandoned(this.dataSource.manager);
    while (!this.loop.stopped) {
      const leaseId = randomUUID();
      const job = await this.imports.claim(this.dataSource.manager, leaseId, this.config.imports.leaseMs);
      if (!job) {
        return;
      }
      try {
        await this.execute(job, leaseId);
      } catch (error) {
        this.logger.error({ msg: 'import failed', import_id: job.id, err: (error as Error).message });
        await this.finish(
          job,
          leaseId,
          ImportStatus.Failed,
          'An internal error stopped the import; it is logged with its id.',
        );
      }
    }
  }

  private async execute(job: ImportJob, leaseId: string): Promise<void> {
    let done = job.rowsDone;
    for (;;) {
      if (this.loop.stopped || !(await this.renew(job, leaseId))) {
        return;
      }
      const rows = await this.imports.rowsAfter(
        this.dataSource.manager,
        job.id,
        done,
        this.config.imports.batchSize,
      );
      if (rows.length === 0) {
        break;
      }
      const next = await this.batch(job, leaseId, rows);
      if (next === null) {
        return;
      }
      done = next;
    }
    await this.finish(job, leaseId, ImportStatus.Completed, null);
  }

  /** One batch: its rows validated, then written (or, dry, written and rolled back) with the job's progress. */
  private async batch(job: ImportJob, leaseId: string, rows: ImportRow[]): Promise<number | null> {
    const upTo = rows[rows.length - 1].row;
    const refused = new Map<number, ApiError>();
    const valid: ValidRow[] = [];
    for (const { row, data, problem } of rows) {
      if (problem !== null || data === null) {
        refused.set(row, new ApiError(problem!.code as never, problem!.message, problem!.field));
        continue;
      }
      const checked = await validateRow(job.kind, data);
      if (checked instanceof ApiError) {
        refused.set(row, checked);
      } else {
        valid.push({ row, dto: checked });
      }
    }
    return this.transactionRunner.run({ requestId: job.requestId, actor: job.actor }, async (tx) => {
      if (!(await this.imports.lockClaimed(tx.manager, job.id, leaseId))) {
        return null;
      }
      const results = await this.write(tx, job, valid);
      const figures: BatchFigures = { created: 0, updated: 0, unchanged: 0, failed: refused.size };
      for (const result of results) {
        if ('error' in result) {
          refused.set(result.row, result.error);
          figures.failed++;
        } else {
          figures[result.outcome]++;
        }
      }
      const now = this.clock.now();
      const byRow = new Map(rows.map((row) => [row.row, row.data]));
      const errors = [...refused.entries()]
        .sort(([a], [b]) => a - b)
        .map(([row, error]) => rowError(job, row, byRow.get(row) ?? null, error, now));
      await this.imports.insertErrors(tx.manager, errors);
      await this.imports.advance(tx.manager, job, upTo, figures, now);
      return upTo;
    });
  }

  /** The batch's records, by its kind's writer; a dry run's are written in a savepoint rolled back, so its figures are exact. */
  private async write(tx: Tx, job: ImportJob, rows: ValidRow[]): Promise<ImportResult[]> {
    const write = this.writers[job.kind];
    if (!job.dryRun) {
      return write(tx, job.tenantId, rows);
    }
    try {
      await tx.savepoint('import_dry_run', async () => {
        throw new DryRunDone(await write(tx, job.tenantId, rows));
      });
    } catch (error) {
      if (error instanceof DryRunDone) {
        return error.results;
      }
      throw error;
    }
    return [];
  }

  private renew(job: ImportJob, leaseId: string): Promise<boolean> {
    return this.imports.renew(this.dataSource.manager, job.id, leaseId, this.config.imports.leaseMs);
  }

  /** The job's last write, while the claim holds: its status and its import.completed or import.failed event. */
  private async finish(
    job: ImportJob,
    leaseId: string,
    status: ImportStatus.Completed | ImportStatus.Failed,
    error: string | null,
  ): Promise<void> {
    await this.transactionRunner.run({ requestId: job.requestId, actor: job.actor }, async (tx) => {
      const locked = await this.imports.lockClaimed(tx.manager, job.id, leaseId);
      if (!locked) {
        return;
      }
      const now = this.clock.now();
      await this.imports.finish(tx.manager, job.id, status, error, now);
      Object.assign(locked, {
        status,
        error,
        leaseId: null,
        leaseUntil: null,
        completedAt: now,
        updatedAt: now,
      });
      await this.events.append(tx, {
        tenantId: job.tenantId,
        type: status === ImportStatus.Completed ? 'import.completed' : 'import.failed',
        subjectId: job.id,
        object: ImportDto.from(locked),
      });
    });
  }
}
