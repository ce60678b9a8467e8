import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { PolledWorker } from '../../common/polled-worker';
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { Clock } from '../../common/clock';
import { addDays } from '../../common/dates';
import { newId } from '../../common/ids';
import { SYSTEM_SCOPE } from '../../common/request-context';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';
import { TransactionRunner } from '../../database/transaction-runner';
import { EventsService } from '../../events';
import { TenantTime } from '../../gateway';
import { BillingRun, BillingRunStatus, BillingRunTrigger } from './billing-run.entity';
import { addFigures, type BatchFigures, emptyFigures } from './batch-figures';
import { BatchBiller } from './batch-biller';
import { runDay } from './bill-computation';
import { BillingPeriodsRepository, type DueLocking } from './billing-periods.repository';
import { BillingRunsRepository } from './billing-runs.repository';
import { BillingRunDto, newRun } from './dto/billing-run.dto';

/** How many missed days the scheduler runs at once, oldest first (a server down longer catches up the rest later). */
export const MAX_CATCH_UP_DAYS = 62;

/**
 * The days a tenant's scheduled runs bill, oldest first: from `from` (the day after its last scheduled run) to today
 * once the run hour has come (else to yesterday), at most MAX_CATCH_UP_DAYS back; of the days a stopped server missed,
 * only the tenant's billing days, and today's run whatever the day.
 */
export function scheduledDays(schedule: {
  today: string;
  hour: number;
  runHourUtc: number;
  from: string;
  billingDays: readonly number[];
}): string[] {
  const { today, from, billingDays } = schedule;
  const last = schedule.hour < schedule.runHourUtc ? addDays(today, -1) : today;
  const first = from < addDays(last, -MAX_CATCH_UP_DAYS) ? addDays(last, -MAX_CATCH_UP_DAYS) : from;
  const days: string[] = [];
  for (let day = first; day <= last; day = addDays(day, 1)) {
    if (day === today || billingDays.includes(Number(day.slice(8, 10)))) {
      days.push(day);
    }
  }
  return days;
}

/** A batch under way: where it started, where the walk goes on once it knows, and its figures once committed. */
interface Batch {
  afterId: string;
  next: Promise<string | null | undefined>;
  done: Promise<BatchFigures | null>;
}

/** What a run reports for a subscriber an unexpected error kept from being billed (the error itself is logged). */
export const UNBILLABLE_REASON = "could not be billed: an internal error, logged with this run's id";

/**
 * Carries out bill runs and starts the scheduled ones. Each pass first lets the scheduler add the day's run of every
 * tenant with services (from BILLING_RUN_HOUR_UTC, one per tenant and day by a unique index, whichever instance
 * gets there first; a test tenant's days are its test clock's advances', docs/test-clocks.md), then claims running runs one at a time with a lease it renews per batch. A run killed midway
 * is taken up again once its lease runs out, and goes on where it stopped: every batch's billed periods committed
 * with its invoices, so nobody is billed twice and the next batches find who is left.
 */
@Injectable()
export class BillingRunWorker extends PolledWorker {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly clock: Clock,
    private readonly transactionRunner: TransactionRunner,
    private readonly events: EventsService,
    private readonly runs: BillingRunsRepository,
    private readonly periods: BillingPeriodsRepository,
    private readonly biller: BatchBiller,
    private readonly tenantTime: TenantTime,
  ) {
    super('BillingRunWorker', 'bill run pass failed');
  }

  protected pollMs(): number {
    return this.config.automation.pollMs;
  }

  protected async pass(): Promise<void> {
    await this.schedule();
    while (!this.loop.stopped) {
      const leaseId = randomUUID();
      const run = await this.runs.claim(this.dataSource.manager, leaseId, this.config.billing.runLeaseMs);
      if (!run) {
        return;
      }
      // A test tenant's run is carried out at its clock's time (what its records are dated, its events' times).
      await this.tenantTime.run(run.tenantId, async () => {
        try {
          await this.execute(run, leaseId);
        } catch (error) {
          await this.fail(run, leaseId, error as Error);
        }
      });
    }
  }

  /**
   * A run that stopped on an error no subscriber explains (the database went away mid-batch, say) is failed, its
   * committed batches kept: a new run for the same day bills who is left, and nobody twice.
   */
  private async fail(run: BillingRun, leaseId: string, error: Error): Promise<void> {
    this.logger.error({ msg: 'bill run failed', run_id: run.id, err: error.message });
    await this.finish(run, leaseId, BillingRunStatus.Failed, { error: error.message });
  }

  /**
   * The scheduled runs: for every tenant with services, one run per day from the day after its last scheduled run
   * to today (today's once the hour has come), oldest first, so the days a stopped server missed are billed when it
   * is back: of those, the days that are a billing day of one of the tenant's profiles, at most MAX_CATCH_UP_DAYS
   * back.
   */
  private async schedule(): Promise<void> {
    if (!this.config.billing.schedulerEnabled) {
      return;
    }
    const now = this.clock.now();
    const today = this.clock.today();
    const { runHourUtc } = this.config.billing;
    for (const { tenantId, from, billingDays } of await this.runs.scheduleFrom(
      this.dataSource.manager,
      today,
    )) {
      for (const day of scheduledDays({ today, hour: now.getUTCHours(), runHourUtc, from, billingDays })) {
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
        if (await this.runs.insertScheduled(this.dataSource.manager, run)) {
          this.logger.log({
            msg: day === today ? 'scheduled bill run started' : 'missed scheduled bill run started',
            run_id: run.id,
            tenant_id: tenantId,
            as_of: day,
          });
        }
      }
    }
  }

  private async execute(claimed: BillingRun, leaseId: string): Promise<void> {
    const run = claimed;
    const day = runDay(run.asOf);
    // Due: not yet billed for the period when the run starts (less those found with nothing to bill). Counted once:
    // a real run taken up again after a crash keeps the figure it started with.
    if (run.dryRun || run.subscribersBilled === 0) {
      run.subscribersDue =
        day.billingDay > 28 ? 0 : await this.periods.countDue(this.dataSource.manager, run.tenantId, day);
      if (!run.dryRun) {
        await this.runs.setDue(this.dataSource.manager, run.id, leaseId, run.subscribersDue);
      }
    }
    if (day.billingDay <= 28) {
      if (run.dryRun) {
        // A dry run starts over whenever it is taken up: nothing of it was written but its figures, at the end.
        Object.assign(run, {
          subscribersBilled: 0,
          invoicesCreated: 0,
          creditsCreated: 0,
          amountTotal: [],
          errors: [],
        });
        for (let afterId = ''; ;) {
          const figures = await this.biller.dryBatch(run, afterId);
          if (!figures || !(await this.renew(run, leaseId))) {
            break;
          }
          addFigures(run, figures);
          afterId = figures.lastId!;
        }
      } else if (!(await this.bill(run, leaseId))) {
        return;
      }
    }
    await this.complete(run, leaseId);
  }

  /**
   * The real run's batches: a pass sharing work with concurrent runs, then one that waits for what they held. Two
   * batches overlap, each in its own transaction: once a batch knows where the walk goes on (its due subscribers
   * locked), the next one starts taking and computing its own while this one writes; it writes once this one has
   * committed (BatchBiller.realBatch: the run's row is each batch's turn), so invoice numbers, figures and every
   * other write go batch after batch as before, and a batch killed midway leaves the one after it uncommitted too.
   */
  private async bill(run: BillingRun, leaseId: string): Promise<boolean> {
    const skip = new Set(run.errors.map((error) => error.subscriber_id));
    for (const locking of ['skip-locked', 'wait'] as DueLocking[]) {
      let current: Batch | null = this.startBatch(run, leaseId, '', locking, skip);
      while (current) {
        const next = await current.next;
        const following =
          typeof next === 'string' && !this.loop.stopped
            ? this.startBatch(run, leaseId, next, locking, skip)
            : null;
        let figures: BatchFigures | null;
        try {
          figures = await current.done;
        } catch (error) {
          // What the next batch commits is billed (the walk never takes a billed subscriber again); then this one's
          // subscribers one by one, the one at fault reported, and the walk goes on from there.
          this.count(run, (await following?.done.catch(() => null)) ?? null, skip);
          figures = await this.billOneByOne(run, leaseId, current.afterId, locking, skip, error as Error);
          this.count(run, figures, skip);
          current =
            figures && !this.loop.stopped
              ? this.startBatch(run, leaseId, figures.lastId!, locking, skip)
              : null;
          continue;
        }
        this.count(run, figures, skip);
        if (!figures) {
          // Nothing left, or the claim was lost: the next batch (if one started) finds the same.
          this.count(run, (await following?.done.catch(() => null)) ?? null, skip);
          break;
        }
        current = following;
      }
      // Between passes, and at the end, no batch is under way: the claim is checked (and renewed) on its own.
      if (this.loop.stopped || !(await this.renew(run, leaseId))) {
        return false;
      }
    }
    return true;
  }

  /**
   * A committed batch's figures in the run's own (the batch wrote them to the run's row; the due count is written
   * again at the end), and those it reported (an error) or found with nothing to bill, passed over from now on.
   */
  private count(run: BillingRun, figures: BatchFigures | null, skip: Set<string>): void {
    if (!figures) {
      return;
    }
    addFigures(run, { ...figures, errors: [] });
    for (const id of [...figures.errors.map((error) => error.subscriber_id), ...figures.emptyIds]) {
      skip.add(id);
    }
  }

  /** Starts a batch after `afterId`: where the walk goes on once it knows (`undefined` when it failed first), and its figures. */
  private startBatch(
    run: BillingRun,
    leaseId: string,
    afterId: string,
    locking: DueLocking,
    skip: ReadonlySet<string>,
  ): Batch {
    let told: (next: string | null | undefined) => void = () => undefined;
    const next = new Promise<string | null | undefined>((resolve) => (told = resolve));
    const done = this.biller.realBatch(run, leaseId, afterId, locking, skip, undefined, told);
    // A batch that failed (or lost its claim) before its due subscribers were known starts no next one.
    done.then(
      () => told(undefined),
      () => told(undefined),
    );
    return { afterId, next, done };
  }

  private async billOneByOne(
    run: BillingRun,
    leaseId: string,
    afterId: string,
    locking: DueLocking,
    skip: Set<string>,
    cause: Error,
  ): Promise<BatchFigures | null> {
    this.logger.warn({
      msg: 'bill run batch failed; billing it one subscriber at a time',
      run_id: run.id,
      err: cause.message,
    });
    const next = await this.periods.due(
      this.dataSource.manager,
      run.tenantId,
      runDay(run.asOf),
      afterId,
      1,
      'none',
    );
    if (next.next === null) {
      return null;
    }
    const subscriberId = next.subscribers[0]?.subscriberId;
    if (subscriberId === undefined) {
      // Nobody is due in the window the batch looked at: nothing of it to bill; the walk goes on past it.
      return { ...emptyFigures(), lastId: next.next };
    }
    try {
      return await this.biller.realBatch(run, leaseId, afterId, locking, skip, 1);
    } catch (error) {
      // The raw text (a database's, say) is for the log; the run, its API and its event carry a reason of ours.
      this.logger.error({
        msg: 'bill run could not bill a subscriber',
        run_id: run.id,
        subscriber_id: subscriberId,
        err: (error as Error).message,
      });
      const reason = UNBILLABLE_REASON;
      await this.transactionRunner.run(SYSTEM_SCOPE, async (tx) => {
        const locked = await this.runs.lockClaimed(tx.manager, run.id, leaseId);
        if (locked) {
          locked.errors = [...locked.errors, { subscriber_id: subscriberId, reason }];
          locked.updatedAt = this.clock.now();
          await this.runs.update(tx.manager, locked);
        }
      });
      return { ...emptyFigures(), errors: [{ subscriber_id: subscriberId, reason }], lastId: subscriberId };
    }
  }

  private renew(run: BillingRun, leaseId: string): Promise<boolean> {
    return this.runs.renew(this.dataSource.manager, run.id, leaseId, this.config.billing.runLeaseMs);
  }

  /** The run's last write: its figures (a real run's were written batch by batch), status and event. */
  private complete(run: BillingRun, leaseId: string): Promise<void> {
    return this.finish(run, leaseId, BillingRunStatus.Completed);
  }

  /**
   * The run's last write, while the claim holds: its status, due count (and a dry run's figures, which a real run
   * wrote batch by batch), and its billing_run.completed or billing_run.failed event.
   */
  private async finish(
    run: BillingRun,
    leaseId: string,
    status: BillingRunStatus.Completed | BillingRunStatus.Failed,
    details?: Record<string, unknown>,
  ): Promise<void> {
    await this.transactionRunner.run({ requestId: run.requestId, actor: run.actor }, async (tx) => {
      const locked = await this.runs.lockClaimed(tx.manager, run.id, leaseId);
      if (!locked) {
        return;
      }
      if (locked.dryRun) {
        Object.assign(locked, {
          subscribersBilled: run.subscribersBilled,
          invoicesCreated: run.invoicesCreated,
          creditsCreated: run.creditsCreated,
          amountTotal: run.amountTotal,
          errors: run.errors,
        });
      }
      const now = this.clock.now();
      Object.assign(locked, {
        subscribersDue: run.subscribersDue,
        status,
        completedAt: now,
        updatedAt: now,
        leaseId: null,
        leaseUntil: null,
      });
      await this.runs.update(tx.manager, locked);
      await this.events.append(tx, {
        tenantId: locked.tenantId,
        type: status === BillingRunStatus.Completed ? 'billing_run.completed' : 'billing_run.failed',
        subjectId: locked.id,
        object: BillingRunDto.from(locked),
        details,
      });
    });
  }
}
