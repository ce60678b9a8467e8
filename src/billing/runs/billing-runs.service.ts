import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Clock } from '../../common/clock';
import { addDays } from '../../common/dates';
import { ApiError } from '../../common/errors/api-error';
import { Page } from '../../common/envelope/envelope';
import { newId } from '../../common/ids';
import { SYSTEM_SCOPE, type AuthContext } from '../../common/request-context';
import { TransactionRunner } from '../../database/transaction-runner';
import { PageQueryDto } from '../../common/pagination';
import { BillingRun, BillingRunItem, BillingRunTrigger } from './billing-run.entity';
import { BillingRunWorker } from './billing-run-worker';
import { BillingRunsRepository } from './billing-runs.repository';
import { BillingRunDto, CreateBillingRunDto, ListBillingRunsQueryDto, newRun } from './dto/billing-run.dto';

/** How far ahead a dry run may look (a real run bills only days that have come). */
export const DRY_RUN_LOOKAHEAD_DAYS = 62;

/** Bill runs as API resources: started (202, carried out by the worker), read and listed. */
@Injectable()
export class BillingRunsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly clock: Clock,
    private readonly transactionRunner: TransactionRunner,
    private readonly runs: BillingRunsRepository,
    private readonly worker: BillingRunWorker,
  ) {}

  start(auth: AuthContext, dto: CreateBillingRunDto): Promise<BillingRunDto> {
    const today = this.clock.today();
    const asOf = dto.as_of ?? today;
    if (!dto.dry_run && asOf > today) {
      throw new ApiError(
        'validation_failed',
        `as_of ${asOf} is in the future (today is ${today}): a real run bills days that have come; a dry run may look ahead ${DRY_RUN_LOOKAHEAD_DAYS} days.`,
        'as_of',
      );
    }
    if (dto.dry_run && asOf > addDays(today, DRY_RUN_LOOKAHEAD_DAYS)) {
      throw new ApiError(
        'validation_failed',
        `A dry run looks ahead at most ${DRY_RUN_LOOKAHEAD_DAYS} days (to ${addDays(today, DRY_RUN_LOOKAHEAD_DAYS)}); as_of is ${asOf}.`,
        'as_of',
      );
    }
    return this.transactionRunner.run(auth, async (tx) => {
      const now = this.clock.now();
      const run = newRun({
        id: newId('brun', now),
        tenantId: auth.tenantId,
        asOf,
        dryRun: dto.dry_run ?? false,
        trigger: BillingRunTrigger.Api,
        actor: auth.actor,
        requestId: auth.requestId,
        at: now,
      });
      await this.runs.insert(tx.manager, run);
      tx.afterCommit(() => this.worker.wake());
      return BillingRunDto.from(run);
    });
  }

  /** The tenant's scheduled run of `day`, started unless it was (a test clock's advance, docs/test-clocks.md). */
  async scheduleDay(tenantId: string, day: string): Promise<BillingRun> {
    const now = this.clock.now();
    const run = newRun({
      id: newId('brun', now),
      tenantId,
      asOf: day,
      dryRun: false,
      trigger: BillingRunTrigger.Schedule,
      actor: SYSTEM_SCOPE.actor,
      requestId: null,
      at: now,
    });
    const made = await this.runs.insertScheduled(this.dataSource.manager, run);
    this.worker.wake();
    return made ? run : ((await this.runs.scheduledOn(this.dataSource.manager, tenantId, day)) ?? run);
  }

  get(tenantId: string, id: string): Promise<BillingRun> {
    return this.runs.getById(this.dataSource.manager, tenantId, id);
  }

  list(tenantId: string, query: ListBillingRunsQueryDto): Promise<Page<BillingRun>> {
    return this.runs.page(this.dataSource.manager, tenantId, query.status, query);
  }

  /** What the run issued (or, dry, would issue) per subscriber, oldest first; 404 for an unknown run. */
  async items(tenantId: string, id: string, query: PageQueryDto): Promise<Page<BillingRunItem>> {
    await this.runs.getById(this.dataSource.manager, tenantId, id);
    return this.runs.itemsPage(this.dataSource.manager, tenantId, id, query);
  }
}
