import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Clock } from '../../common/clock';
import { Page } from '../../common/envelope/envelope';
import { newId } from '../../common/ids';
import type { AuthContext } from '../../common/request-context';
import { TransactionRunner } from '../../database/transaction-runner';
import { BillingRun, BillingRunTrigger } from './billing-run.entity';
import { BillingRunWorker } from './billing-run-worker';
import { BillingRunsRepository } from './billing-runs.repository';
import { BillingRunDto, CreateBillingRunDto, ListBillingRunsQueryDto, newRun } from './dto/billing-run.dto';

/** Bill runs as API resources: started (202, carried out by the worker), read and listed. */
@Injectable()
export class BillingRunsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly clock: Clock,
    private readonly tx: TransactionRunner,
    private readonly runs: BillingRunsRepository,
    private readonly worker: BillingRunWorker,
  ) {}

  start(auth: AuthContext, dto: CreateBillingRunDto): Promise<BillingRunDto> {
    return this.tx.run(auth, async (tx) => {
      const now = new Date();
      const run = newRun({
        id: newId('brun', now),
        tenantId: auth.tenantId,
        asOf: dto.as_of ?? this.clock.today(),
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

  get(tenantId: string, id: string): Promise<BillingRun> {
    return this.runs.getById(this.dataSource.manager, tenantId, id);
  }

  list(tenantId: string, query: ListBillingRunsQueryDto): Promise<Page<BillingRun>> {
    return this.runs.page(this.dataSource.manager, tenantId, query.status, query);
  }
}
