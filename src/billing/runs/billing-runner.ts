import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { utcDay } from '../../common/clock';
import { addDays, addMonths } from '../../common/dates';
import { newId } from '../../common/ids';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';
import { TransactionRunner, type Tx } from '../../database/transaction-runner';
import { EventsService, type NewEvent } from '../../events';
import { InvoiceDto } from '../invoices/dto/invoice-response.dto';
import { Invoice, InvoiceStatus } from '../invoices/invoice.entity';
import { LedgerEntryType } from '../ledger/ledger-entry.entity';
import { TransactionDto } from '../transactions/dto/transaction-response.dto';
import { Transaction, TransactionKind, TransactionSource } from '../transactions/transaction.entity';
import { BillingPeriod, BillingRun, type RunError } from './billing-run.entity';
import {
  BillingRunsRepository,
  type DueLocking,
  type DueSubscriber,
  type LedgerRow,
} from './billing-runs.repository';
import { runLines, type BillableService, type PlanInfo, type RunLines } from './proration';

/** Whether a tenant's terminated services are credited their unused days (the termination_billing rule). */
export type TerminationCreditPolicy = (manager: EntityManager, tenantId: string) => Promise<boolean>;

/** The day a run bills: its date, the previous period's start and the billing day it matches. */
export interface RunDay {
  asOf: string;
  previousStart: string;
  billingDay: number;
}

export function runDay(asOf: string): RunDay {
  return { asOf, previousStart: addMonths(asOf, -1), billingDay: Number(asOf.slice(8, 10)) };
}

/** One subscriber's outcome in a batch. */
type Billed = { subscriber: DueSubscriber; lines: RunLines } | { subscriber: DueSubscriber; error: string };

/** What a batch added to its run's figures. */
export interface BatchFigures {
  billed: number;
  invoices: number;
  credits: number;
  amounts: Map<string, number>;
  errors: RunError[];
  /** Due subscribers found with nothing to bill: they were not due after all (and are not claimed: a later run of
   * the day bills them if a service is added meanwhile). */
  empty: number;
  emptyIds: string[];
  lastId: string | null;
}

export function emptyFigures(): BatchFigures {
  return {
    billed: 0,
    invoices: 0,
    credits: 0,
    amounts: new Map(),
    errors: [],
    empty: 0,
    emptyIds: [],
    lastId: null,
  };
}

/** The progress a run writes after each batch, or a dry run at its end. */
export function addFigures(run: BillingRun, figures: BatchFigures): void {
  run.subscribersBilled += figures.billed;
  run.subscribersDue = Math.max(0, run.subscribersDue - figures.empty);
  run.invoicesCreated += figures.invoices;
  run.creditsCreated += figures.credits;
  const totals = new Map(run.amountTotal.map((entry) => [entry.currency, entry.amount]));
  for (const [currency, amount] of figures.amounts) {
    totals.set(currency, (totals.get(currency) ?? 0) + amount);
  }
  run.amountTotal = [...totals]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([currency, amount]) => ({ currency, amount }));
  run.errors = [...run.errors, ...figures.errors];
}

/**
 * Bills one batch of due subscribers of a run, set-based: it reads the batch's services, plan history, plans and
 * previous charges in four statements, computes every subscriber's lines (proration.ts), and writes the billed
 * periods (the exactly-once claim), invoices, ledger entries and balances, credits, and events with their webhook
 * deliveries in one statement each, in the batch's one transaction.
 */
@Injectable()
export class BillingRunner {
  private readonly logger = new Logger('BillingRunner');
  private terminationCredit: TerminationCreditPolicy = () => Promise.resolve(true);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly tx: TransactionRunner,
    private readonly events: EventsService,
    private readonly runs: BillingRunsRepository,
  ) {}

  /** Registered by automation, which owns the termination_billing rule's setting. */
  useTerminationCredit(policy: TerminationCreditPolicy): void {
    this.terminationCredit = policy;
  }

  get batchSize(): number {
    return this.config.billing.runBatchSize;
  }

  /**
   * Takes the next batch after `afterId` and bills it, all in one transaction that first checks the run is still
   * this worker's. Null when nothing is left (or the claim was lost); the batch's figures otherwise.
   */
  async realBatch(
    runId: string,
    leaseId: string,
    afterId: string,
    locking: DueLocking,
    skip: ReadonlySet<string>,
    limit = this.batchSize,
  ): Promise<BatchFigures | null> {
    let committed: BatchFigures | null = null;
    let run: BillingRun | null = null;
    await this.tx.run({ requestId: null, actor: { type: 'system', id: null } }, async (tx) => {
      run = await this.runs.lockClaimed(tx.manager, runId, leaseId);
      if (!run) {
        return;
      }
      const scoped = tx.withScope({ requestId: run.requestId, actor: run.actor });
      const day = runDay(run.asOf);
      const due = await this.runs.due(tx.manager, run.tenantId, day, afterId, limit, locking);
      if (due.next === null) {
        return;
      }
      // Those this run already reported (an error) or found with nothing to bill are passed over, not ended on.
      const subscribers = due.subscribers.filter((subscriber) => !skip.has(subscriber.subscriberId));
      const figures =
        subscribers.length === 0
          ? this.figuresOf([])
          : await this.write(
              scoped,
              run,
              day,
              await this.compute(tx.manager, run.tenantId, day, subscribers),
            );
      figures.lastId = due.next;
      addFigures(run, figures);
      run.updatedAt = new Date();
      await this.runs.update(tx.manager, run);
      committed = figures;
    });
    return committed;
  }

  /** A dry run's batch: the same computation, no lock and no write. */
  async dryBatch(run: BillingRun, afterId: string): Promise<BatchFigures | null> {
    const { manager } = this.dataSource;
    const day = runDay(run.asOf);
    const due = await this.runs.due(manager, run.tenantId, day, afterId, this.batchSize, 'none');
    if (due.next === null) {
      return null;
    }
    const figures = this.figuresOf(
      due.subscribers.length === 0 ? [] : await this.compute(manager, run.tenantId, day, due.subscribers),
    );
    figures.lastId = due.next;
    return figures;
  }

  private figuresOf(billed: Billed[]): BatchFigures {
    const figures = emptyFigures();
    for (const each of billed) {
      if ('error' in each) {
        figures.errors.push({ subscriber_id: each.subscriber.subscriberId, reason: each.error });
        continue;
      }
      if (each.lines.lines.length === 0) {
        figures.empty += 1;
        figures.emptyIds.push(each.subscriber.subscriberId);
        continue;
      }
      figures.billed += 1;
      if (each.lines.total < 0) {
        figures.credits += 1;
      } else {
        figures.invoices += 1;
        const currency = each.subscriber.currency;
        figures.amounts.set(currency, (figures.amounts.get(currency) ?? 0) + each.lines.total);
      }
    }
    return figures;
  }

  /** Every subscriber's lines, from four reads for the whole batch. */
  private async compute(
    manager: EntityManager,
    tenantId: string,
    day: RunDay,
    subscribers: DueSubscriber[],
  ): Promise<Billed[]> {
    const ids = subscribers.map((subscriber) => subscriber.subscriberId);
    const services = await this.runs.services(manager, tenantId, ids, day.previousStart);
    const previousStart = new Date(`${day.previousStart}T00:00:00.000Z`);
    // A service untouched since before the previous period has been on its plan all along: no history to read.
    const changed = services
      .filter((service) => service.updatedAt >= previousStart)
      .map((service) => service.id);
    const history = await this.runs.planChanges(manager, tenantId, changed);
    const previous = await this.runs.previousPeriods(manager, tenantId, ids, day.previousStart);
    const planIds = new Set<string>([
      ...services.map((service) => service.planId),
      ...history.map((change) => change.planId),
      ...previous.flatMap((period) => period.charges.map((charge) => charge.plan_id)),
    ]);
    const plans = new Map<string, PlanInfo>(
      (await this.runs.plans(manager, tenantId, [...planIds])).map((plan) => [plan.id, plan]),
    );
    const creditTermination = await this.terminationCredit(manager, tenantId);
    const changesOf = new Map<string, { on: string; planId: string }[]>();
    for (const change of history) {
      changesOf.set(change.serviceId, [
        ...(changesOf.get(change.serviceId) ?? []),
        { on: utcDay(change.at), planId: change.planId },
      ]);
    }
    const chargesOf = new Map(previous.map((period) => [period.subscriberId, period.charges]));
    return subscribers.map((subscriber) => {
      const own: BillableService[] = services
        .filter((service) => service.subscriberId === subscriber.subscriberId)
        .map((service) => ({
          id: service.id,
          planId: service.planId,
          billedInAdvance: service.status === 'active' || service.status === 'suspended',
          activatedOn: service.activatedAt ? utcDay(service.activatedAt) : null,
          terminatedOn: service.terminatedAt ? utcDay(service.terminatedAt) : null,
          planChanges: changesOf.get(service.id) ?? [],
        }));
      const foreign = own
        .map((service) => plans.get(service.planId))
        .find((plan) => plan !== undefined && plan.currency !== subscriber.currency);
      if (foreign) {
        return {
          subscriber,
          error: `plan ${foreign.id} is priced in ${foreign.currency}; the subscriber is billed in ${subscriber.currency}`,
        };
      }
      const charges = chargesOf.get(subscriber.subscriberId) ?? [];
      try {
        const lines = runLines({
          asOf: day.asOf,
          services: own,
          plans,
          previousCharges: new Map(charges.map((charge) => [charge.service_id, charge])),
          creditTermination,
        });
        return { subscriber, lines };
      } catch (error) {
        return { subscriber, error: (error as Error).message };
      }
    });
  }

  /** The batch's writes; answers its figures (only what this batch's claim won counts). */
  private async write(tx: Tx, run: BillingRun, day: RunDay, billed: Billed[]): Promise<BatchFigures> {
    const { manager } = tx;
    const now = new Date();
    const periodEnd = addMonths(day.asOf, 1);
    // A subscriber with nothing to bill is not claimed: the period stays open to a later run of the day.
    const ok = billed.filter(
      (each): each is Extract<Billed, { lines: RunLines }> => 'lines' in each && each.lines.lines.length > 0,
    );
    const periods = ok.map((each) => {
      const hasLines = each.lines.lines.length > 0;
      return Object.assign(new BillingPeriod(), {
        tenantId: run.tenantId,
        subscriberId: each.subscriber.subscriberId,
        periodStart: day.asOf,
        periodEnd,
        runId: run.id,
        invoiceId: hasLines && each.lines.total >= 0 ? newId('inv', now) : null,
        creditId: hasLines && each.lines.total < 0 ? newId('txn', now) : null,
        charges: each.lines.charges,
        createdAt: now,
      });
    });
    const claimed = await this.runs.claimPeriods(manager, periods);
    const won = periods.filter((period) => claimed.has(period.subscriberId));
    const linesOf = new Map(ok.map((each) => [each.subscriber.subscriberId, each]));
    const invoicing = won.filter((period) => period.invoiceId !== null);
    let number =
      invoicing.length > 0
        ? await this.runs.reserveInvoiceNumbers(manager, run.tenantId, invoicing.length)
        : 0;
    const invoices: Invoice[] = invoicing.map((period) => {
      const { subscriber, lines } = linesOf.get(period.subscriberId)!;
      const paid = lines.total === 0;
      return Object.assign(new Invoice(), {
        tenantId: run.tenantId,
        id: period.invoiceId!,
        number: number++,
        subscriberId: period.subscriberId,
        currency: subscriber.currency,
        status: paid ? InvoiceStatus.Paid : InvoiceStatus.Open,
        lines: lines.lines,
        total: lines.total,
        amountPaid: 0,
        dueDate: addDays(day.asOf, subscriber.paymentTermsDays),
        finalizedAt: now,
        paidAt: paid ? now : null,
        voidedAt: null,
        createdAt: now,
        updatedAt: now,
      });
    });
    const credits: Transaction[] = won
      .filter((period) => period.creditId !== null)
      .map((period) => {
        const { subscriber, lines } = linesOf.get(period.subscriberId)!;
        return Object.assign(new Transaction(), {
          tenantId: run.tenantId,
          id: period.creditId!,
          subscriberId: period.subscriberId,
          kind: TransactionKind.Credit,
          source: TransactionSource.Adjustment,
          amount: -lines.total,
          currency: subscriber.currency,
          externalId: null,
          reference: run.id,
          description: `Bill run ${day.asOf}: credit for unused days already billed`,
          method: null,
          occurredAt: now,
          refundOf: null,
          metadata: { billing_run_id: run.id, period_start: day.asOf },
          allocatedAmount: 0,
          refundedAmount: 0,
          createdAt: now,
        });
      });
    await this.runs.insertInvoices(manager, invoices);
    await this.runs.insertCredits(manager, credits);
    const ledger: LedgerRow[] = [
      ...invoices
        .filter((invoice) => invoice.total > 0)
        .map((invoice) => ({
          id: newId('led', now),
          tenantId: run.tenantId,
          subscriberId: invoice.subscriberId,
          currency: invoice.currency,
          type: LedgerEntryType.Invoice,
          amount: invoice.total,
          sourceId: invoice.id,
          createdAt: now,
        })),
      ...credits.map((credit) => ({
        id: newId('led', now),
        tenantId: run.tenantId,
        subscriberId: credit.subscriberId,
        currency: credit.currency,
        type: LedgerEntryType.Credit,
        amount: -credit.amount,
        sourceId: credit.id,
        createdAt: now,
      })),
    ];
    await this.runs.postMany(manager, ledger);
    const events: NewEvent[] = [];
    for (const invoice of invoices) {
      const object = InvoiceDto.from(invoice);
      const types =
        invoice.status === InvoiceStatus.Paid
          ? (['invoice.created', 'invoice.finalized', 'invoice.paid'] as const)
          : (['invoice.created', 'invoice.finalized'] as const);
      for (const type of types) {
        events.push({ tenantId: run.tenantId, type, subjectId: invoice.id, object });
      }
    }
    for (const credit of credits) {
      events.push({
        tenantId: run.tenantId,
        type: 'transaction.created',
        subjectId: credit.id,
        object: TransactionDto.from(credit),
      });
    }
    await this.events.appendMany(tx, events);
    const figures = this.figuresOf(
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
}
