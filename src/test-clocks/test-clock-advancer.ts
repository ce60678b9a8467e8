import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { DataSource } from 'typeorm';
import { TenantDunningDay } from '../automation';
import { BillingRunsService, BillingRunStatus } from '../billing';
import { atFrozenTime, Clock, utcDay } from '../common/clock';
import { PolledWorker } from '../common/polled-worker';
import { SYSTEM_SCOPE } from '../common/request-context';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { TransactionRunner } from '../database/transaction-runner';
import { EventsService } from '../events';
import { TestClock, TestClockDto, TestClocksRepository, TestClockStatus } from '../gateway';
import { advanceSteps, billsDayAt } from './advance-steps';

/** How often an advance looks whether the day's bill run is done. */
const RUN_POLL_MS = 20;

/**
 * Carries out test clocks' advances (docs/test-clocks.md). Each pass claims an advancing clock with a lease and walks
 * it from its frozen_time to its advance_to, step by step (advanceSteps): the clock is moved to the step first (its
 * tenant's records and the workers acting for it read that time), then the day's bill run (from the run hour) is
 * carried out by the bill run worker, then the tenant's dunning (overdue, suspensions, reminders, late fees) and the
 * rules' reactions. A killed instance's advance is taken up by another once its lease runs out, from the step it
 * reached (every step's work is once-only); the last write sets the clock ready with test_clock.ready.
 */
@Injectable()
export class TestClockAdvancer extends PolledWorker {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly clock: Clock,
    private readonly transactionRunner: TransactionRunner,
    private readonly events: EventsService,
    private readonly clocks: TestClocksRepository,
    private readonly runs: BillingRunsService,
    private readonly dunning: TenantDunningDay,
  ) {
    super('TestClockAdvancer', 'test clock pass failed');
  }

  protected pollMs(): number {
    return this.config.automation.pollMs;
  }

  protected async pass(): Promise<void> {
    while (!this.loop.stopped) {
      const leaseId = randomUUID();
      const clock = await this.clocks.claim(this.dataSource.manager, leaseId, this.leaseMs);
      if (!clock) {
        return;
      }
      try {
        if (await this.advance(clock, leaseId)) {
          await this.finish(clock, leaseId, TestClockStatus.Ready);
        }
      } catch (error) {
        this.logger.error({
          msg: 'test clock advance failed',
          clock_id: clock.id,
          err: (error as Error).message,
        });
        await this.finish(clock, leaseId, TestClockStatus.InternalFailure);
      }
    }
  }

  private get leaseMs(): number {
    return this.config.billing.runLeaseMs;
  }

  /** Walks the clock to its advance_to; false when the lease was lost (another instance goes on). */
  private async advance(clock: TestClock, leaseId: string): Promise<boolean> {
    const { runHourUtc } = this.config.billing;
    for (const at of advanceSteps(clock.frozenTime, clock.advanceTo!, runHourUtc)) {
      if (this.loop.stopped || !(await this.step(clock, leaseId, at))) {
        return false;
      }
      await atFrozenTime(at, async () => {
        if (billsDayAt(at, runHourUtc) && !(await this.billDay(clock, leaseId, at))) {
          return;
        }
        await this.dunning.run(clock.tenantId);
      });
    }
    return true;
  }

  private step(clock: TestClock, leaseId: string, at: Date): Promise<boolean> {
    return this.clocks.step(this.dataSource.manager, clock.id, leaseId, this.leaseMs, at, this.clock.now());
  }

  /** The day's scheduled run of the tenant, waited for (the lease renewed meanwhile); false once the lease is lost. */
  private async billDay(clock: TestClock, leaseId: string, at: Date): Promise<boolean> {
    const run = await this.runs.scheduleDay(clock.tenantId, utcDay(at));
    for (let polls = 1; ; polls++) {
      const now = await this.runs.get(clock.tenantId, run.id);
      if (now.status !== BillingRunStatus.Running) {
        return true;
      }
      if (this.loop.stopped || (polls % 50 === 0 && !(await this.step(clock, leaseId, at)))) {
        return false;
      }
      await sleep(RUN_POLL_MS);
    }
  }

  /** The advance's last write, while the lease holds: the clock ready at advance_to (or failed), and its event. */
  private async finish(
    clock: TestClock,
    leaseId: string,
    status: TestClockStatus.Ready | TestClockStatus.InternalFailure,
  ): Promise<void> {
    await this.transactionRunner.run(SYSTEM_SCOPE, async (tx) => {
      const locked = await this.clocks.lockLeased(tx.manager, clock.id, leaseId);
      if (!locked) {
        return;
      }
      Object.assign(locked, {
        status,
        frozenTime: status === TestClockStatus.Ready ? locked.advanceTo : locked.frozenTime,
        advanceTo: null,
        leaseId: null,
        leaseUntil: null,
        updatedAt: this.clock.now(),
      });
      await this.clocks.update(tx.manager, locked);
      await this.events.append(tx, {
        tenantId: locked.ownerTenantId,
        type: status === TestClockStatus.Ready ? 'test_clock.ready' : 'test_clock.internal_failure',
        subjectId: locked.id,
        object: TestClockDto.from(locked),
      });
    });
  }
}
