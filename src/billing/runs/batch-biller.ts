import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { Clock } from '../../common/clock';
import { MAX_AMOUNT } from '../../common/money';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';
import { TransactionRunner, type Tx } from '../../database/transaction-runner';
import { EventsService } from '../../events';
import { ChargesRepository } from '../charges/charges.repository';
import type { Invoice } from '../invoices/invoice.entity';
import { InvoicesRepository } from '../invoices/invoices.repository';
import { LedgerRepository } from '../ledger/ledger.repository';
import { NumberingService } from '../numbering/numbering.service';
import { InvoiceTaxes } from '../taxes/invoice-taxes';
import { AutoApply } from '../transactions/auto-apply';
import type { Transaction } from '../transactions/transaction.entity';
import { TransactionsRepository } from '../transactions/transactions.repository';
import { addFigures, type BatchFigures, figuresOf } from './batch-figures';
import { creditOf, eventsOf, invoiceOf, itemOf, ledgerRowsOf, periodsOf } from './batch-records';
import { type Billed, BillComputation, type Computed, type RunDay, runDay } from './bill-computation';
import { BillingPeriod, BillingRun } from './billing-run.entity';
import { BillingPeriodsRepository, type DueLocking } from './billing-periods.repository';
import { BillingRunsRepository } from './billing-runs.repository';
import { ServiceBillingRepository } from './service-billing.repository';
import { RevenueRepository } from '../reports/revenue.repository';

/** The subscribers whose periods a batch claimed, by subscriber. */
type ClaimedLines = Map<string, Computed>;

/**
 * Bills one batch of due subscribers of a run, set-based: it reads the batch's services, plan history, plans and
 * previous charges in four statements, computes every subscriber's lines (BillComputation, proration.ts), and writes
 * the billed periods (the exactly-once claim), invoices, ledger entries and balances, credits, and events with their
 * webhook deliveries in one statement each, in the batch's one transaction.
 */
@Injectable()
export class BatchBiller {
  private readonly logger = new Logger('BatchBiller');

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly transactionRunner: TransactionRunner,
    private readonly events: EventsService,
    private readonly runs: BillingRunsRepository,
    private readonly periods: BillingPeriodsRepository,
    private readonly serviceBilling: ServiceBillingRepository,
    private readonly invoices: InvoicesRepository,
    private readonly ledger: LedgerRepository,
    private readonly transactions: TransactionsRepository,
    private readonly charges: ChargesRepository,
    private readonly autoApply: AutoApply,
    private readonly taxes: InvoiceTaxes,
    private readonly numbering: NumberingService,
    private readonly revenue: RevenueRepository,
    private readonly computation: BillComputation,
    private readonly clock: Clock,
  ) {}

  get batchSize(): number {
    return this.config.billing.runBatchSize;
  }

  /**
   * Takes the next batch after `afterId` and bills it, in one transaction: it locks the batch's due subscribers and
   * computes their lines first (telling `onNext` where the walk goes on as soon as it knows, so the worker can start
   * the next batch computing meanwhile), then takes its turn, the run's row, which renews the lease and checks the
   * run is still this worker's (waiting for the batch before, which holds it until it commits), and writes. Null
   * when nothing is left (or the claim was lost); the batch's figures otherwise.
   *
   * The tax rates were read unlocked while computing (the batch before may be marking them used): once the batch
   * holds its turn they are read again share-locked and the lines computed again if one changed meanwhile.
   */
  async realBatch(
    claimed: BillingRun,
    leaseId: string,
    afterId: string,
    locking: DueLocking,
    skip: ReadonlySet<string>,
    limit = this.batchSize,
    onNext: (next: string | null) => void = () => undefined,
  ): Promise<BatchFigures | null> {
    let committed: BatchFigures | null = null;
    await this.transactionRunner.run({ requestId: null, actor: { type: 'system', id: null } }, async (tx) => {
      const { tenantId } = claimed;
      const day = runDay(claimed.asOf);
      const due = await this.periods.due(tx.manager, tenantId, day, afterId, limit, locking);
      onNext(due.next);
      if (due.next === null) {
        return;
      }
      // Those this run already reported (an error) or found with nothing to bill are passed over, not ended on.
      const subscribers = due.subscribers.filter((subscriber) => !skip.has(subscriber.subscriberId));
      const computed =
        subscribers.length === 0
          ? null
          : await this.computation.computeBatch(tx.manager, tenantId, day, subscribers, false);
      // The batch's turn: the run's row, renewed and locked while the claim holds.
      if (!(await this.runs.renew(tx.manager, claimed.id, leaseId, this.config.billing.runLeaseMs))) {
        return;
      }
      const run = await this.runs.lockClaimed(tx.manager, claimed.id, leaseId);
      if (!run) {
        return;
      }
      let billed = computed?.billed ?? [];
      if (
        computed &&
        !(await this.taxes.stillAsRead(tx.manager, tenantId, computed.taxContexts, computed.rates))
      ) {
        billed = await this.computation.compute(tx.manager, tenantId, day, subscribers);
      }
      const scoped = tx.withScope({ requestId: run.requestId, actor: run.actor });
      const figures = billed.length === 0 ? figuresOf([]) : await this.write(scoped, run, day, billed);
      figures.lastId = due.next;
      addFigures(run, figures);
      run.updatedAt = this.clock.now();
      await this.runs.update(tx.manager, run);
      committed = figures;
    });
    return committed;
  }

  /** A dry run's batch: the same computation, no lock and no write. */
  async dryBatch(run: BillingRun, afterId: string): Promise<BatchFigures | null> {
    const { manager } = this.dataSource;
    const day = runDay(run.asOf);
    if (afterId === '') {
      // A dry run starts over whenever it is taken up: its items too.
      await this.runs.deleteItems(manager, run.id);
    }
    const due = await this.periods.due(manager, run.tenantId, day, afterId, this.batchSize, 'none');
    if (due.next === null) {
      return null;
    }
    const billed =
      due.subscribers.length === 0
        ? []
        : await this.computation.compute(manager, run.tenantId, day, due.subscribers);
    const now = this.clock.now();
    await this.runs.insertItems(
      manager,
      billed.flatMap((each) =>
        'lines' in each && each.lines.lines.length === 0 ? [] : [itemOf(run, each, null, null, now)],
      ),
    );
    const figures = figuresOf(billed);
    figures.lastId = due.next;
    return figures;
  }

  /**
   * The batch's writes, step by step in the order their locks are taken: the periods claimed, the invoices and
   * credits issued, the money posted, the charges and services marked billed, the run's items. Answers its figures
   * (only what this batch's claim won counts).
   */
  private async write(tx: Tx, run: BillingRun, day: RunDay, billed: Billed[]): Promise<BatchFigures> {
    const { manager } = tx;
    const now = this.clock.now();
    const computed = billed.filter((each): each is Computed => 'lines' in each);
    // A subscriber with nothing to bill is not claimed: the period stays open to a later run of the day.
    const ok = computed.filter((each) => each.lines.lines.length > 0);
    const periods = periodsOf(run, day, ok, now);
    const claimed = await this.periods.claimPeriods(manager, periods);
    const won = periods.filter((period) => claimed.has(period.subscriberId));
    const linesOf: ClaimedLines = new Map(ok.map((each) => [each.subscriber.subscriberId, each]));
    const { invoices, credits } = await this.issue(tx, run, day, won, linesOf, now);
    await this.post(tx, run.tenantId, invoices, credits, now);
    await this.markBilled(manager, run.tenantId, won, linesOf, computed, now);
    await this.runs.insertItems(manager, [
      ...won.map((period) =>
        itemOf(run, linesOf.get(period.subscriberId)!, period.invoiceId, period.creditId, now),
      ),
      ...billed.filter((each) => 'error' in each).map((each) => itemOf(run, each, null, null, now)),
    ]);
    const figures = figuresOf(
      billed.filter(
        (each) =>
          'error' in each || each.lines.lines.length === 0 || claimed.has(each.subscriber.subscriberId),
      ),
    );
    if (figures.errors.length > 0) {
      this.logger.warn({
        msg: 'bill run could not bill some subscribers',
        run_id: run.id,
        errors: figures.errors.length,
      });
    }
    return figures;
  }

  /**
   * The claimed periods' invoices (numbered from the tenant's series, in the batch's order) and credits, written
   * with the tax rates they used and their events.
   */
  private async issue(
    tx: Tx,
    run: BillingRun,
    day: RunDay,
    won: BillingPeriod[],
    linesOf: ClaimedLines,
    now: Date,
  ): Promise<{ invoices: Invoice[]; credits: Transaction[] }> {
    const { manager } = tx;
    const invoicing = won.filter((period) => period.invoiceId !== null);
    const numbers =
      invoicing.length > 0
        ? await this.numbering.reserve(manager, run.tenantId, 'invoice', invoicing.length, day.asOf)
        : [];
    const invoices = invoicing.map((period, index) =>
      invoiceOf(run, day, period, linesOf.get(period.subscriberId)!, numbers[index], now),
    );
    const credits = won
      .filter((period) => period.creditId !== null)
      .map((period) => creditOf(run, day, period, linesOf.get(period.subscriberId)!, now));
    await this.invoices.insertMany(manager, invoices);
    await this.revenue.record(manager, run.tenantId, { invoiceIds: invoices.map((invoice) => invoice.id) });
    await this.transactions.insertMany(manager, credits);
    await this.taxes.markUsed(
      manager,
      run.tenantId,
      won.flatMap((period) => linesOf.get(period.subscriberId)!.lines.lines),
    );
    await this.events.appendMany(tx, eventsOf(run.tenantId, invoices, credits, now));
    return { invoices, credits };
  }

  /** The new documents' money: unapplied payments settle the invoices, then the ledger and balances take both. */
  private async post(
    tx: Tx,
    tenantId: string,
    invoices: Invoice[],
    credits: Transaction[],
    now: Date,
  ): Promise<void> {
    // The subscribers' money not applied yet pays their new invoices (auto-apply), before the ledger posting: it
    // locks that money, and the balance rows are the last locks taken.
    await this.autoApply.toIssuedInvoices(tx, invoices);
    if (
      !(await this.ledger.postMany(tx.manager, ledgerRowsOf(tenantId, invoices, credits, now), MAX_AMOUNT))
    ) {
      // The batch is billed again one subscriber at a time, and the one at fault reported.
      throw new Error('a balance would pass the largest amount kept');
    }
  }

  /** The pending charges the documents carry, and the services' billing states the lines moved. */
  private async markBilled(
    manager: EntityManager,
    tenantId: string,
    won: BillingPeriod[],
    linesOf: ClaimedLines,
    computed: Computed[],
    now: Date,
  ): Promise<void> {
    await this.charges.markInvoiced(
      manager,
      tenantId,
      won.map((period) => ({
        chargeIds: linesOf.get(period.subscriberId)!.lines.chargeIds,
        invoiceId: period.invoiceId,
        creditId: period.creditId,
      })),
      now,
    );
    // Services' billing states: of those billed, and of those found with nothing to bill whose state still moved
    // (a service ended on the day it started, say), so they are not looked at again.
    const wonIds = new Set(won.map((period) => period.subscriberId));
    await this.serviceBilling.saveStates(
      manager,
      tenantId,
      computed
        .filter((each) => wonIds.has(each.subscriber.subscriberId) || each.lines.lines.length === 0)
        .flatMap((each) =>
          each.lines.states.map((state) => ({ ...state, subscriberId: each.subscriber.subscriberId })),
        ),
      now,
    );
  }
}
