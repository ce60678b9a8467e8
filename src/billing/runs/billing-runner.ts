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
import { MAX_AMOUNT } from '../../common/money';
import { Charge, ChargeSource, ChargeStatus } from '../charges/charge.entity';
import { chargeLine } from '../charges/charge-line';
import { ChargeDto } from '../charges/dto/charge.dto';
import { ChargesRepository } from '../charges/charges.repository';
import { Invoice, type InvoiceLine, InvoiceStatus } from '../invoices/invoice.entity';
import { InvoicesRepository } from '../invoices/invoices.repository';
import { LedgerEntryType } from '../ledger/ledger-entry.entity';
import { LedgerRepository, type LedgerRow } from '../ledger/ledger.repository';
import { BillingProfilesRepository } from '../profiles/billing-profiles.repository';
import { TransactionDto } from '../transactions/dto/transaction-response.dto';
import { Transaction, TransactionKind, TransactionSource } from '../transactions/transaction.entity';
import { AutoApply } from '../transactions/auto-apply';
import { TransactionsRepository } from '../transactions/transactions.repository';
import { BillingPeriod, BillingRun, BillingRunItem, type RunError } from './billing-run.entity';
import {
  BillingRunsRepository,
  type DueLocking,
  type DueSubscriber,
  type ServiceRow,
} from './billing-runs.repository';
import {
  type BillableService,
  NEVER_BILLED_MONTHS,
  type PlanInfo,
  type ServiceBillingState,
  runLines,
  settleService,
} from './proration';

/** Whether a tenant's terminated services are credited their unused days (the termination_billing rule). */
export type TerminationCreditPolicy = (manager: EntityManager, tenantId: string) => Promise<boolean>;

/** The day a run bills: its date, the earliest day a never-billed service is charged from, and its billing day. */
export interface RunDay {
  asOf: string;
  previousStart: string;
  billingDay: number;
}

export function runDay(asOf: string): RunDay {
  return {
    asOf,
    previousStart: addMonths(asOf, -NEVER_BILLED_MONTHS),
    billingDay: Number(asOf.slice(8, 10)),
  };
}

/** What a subscriber is billed: its lines (plans, prorations, credits and pending charges) and what they change. */
export interface SubscriberLines {
  lines: InvoiceLine[];
  total: number;
  /** Each service's billing state after the lines (those that changed). */
  states: ServiceBillingState[];
  /** The pending charges the lines carry. */
  chargeIds: string[];
}

/** One subscriber's outcome in a batch. */
type Billed =
  { subscriber: DueSubscriber; lines: SubscriberLines } | { subscriber: DueSubscriber; error: string };

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
    private readonly invoices: InvoicesRepository,
    private readonly ledger: LedgerRepository,
    private readonly transactions: TransactionsRepository,
    private readonly charges: ChargesRepository,
    private readonly profiles: BillingProfilesRepository,
    private readonly autoApply: AutoApply,
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
    if (afterId === '') {
      // A dry run starts over whenever it is taken up: its items too.
      await this.runs.deleteItems(manager, run.id);
    }
    const due = await this.runs.due(manager, run.tenantId, day, afterId, this.batchSize, 'none');
    if (due.next === null) {
      return null;
    }
    const billed =
      due.subscribers.length === 0 ? [] : await this.compute(manager, run.tenantId, day, due.subscribers);
    const now = new Date();
    await this.runs.insertItems(
      manager,
      billed.flatMap((each) =>
        'lines' in each && each.lines.lines.length === 0 ? [] : [this.item(run, each, null, null, now)],
      ),
    );
    const figures = this.figuresOf(billed);
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

  /** A run's record of what a subscriber was billed (or, dry, would be), or why not. */
  private item(
    run: BillingRun,
    billed: Billed,
    invoiceId: string | null,
    creditId: string | null,
    at: Date,
  ): BillingRunItem {
    return Object.assign(new BillingRunItem(), {
      tenantId: run.tenantId,
      id: newId('bri', at),
      runId: run.id,
      subscriberId: billed.subscriber.subscriberId,
      currency: billed.subscriber.currency,
      lines: 'lines' in billed ? billed.lines.lines : [],
      total: 'lines' in billed ? billed.lines.total : 0,
      invoiceId,
      creditId,
      error: 'error' in billed ? billed.error : null,
      createdAt: at,
    });
  }

  /**
   * What these subscribers would be billed on `day`, from five reads for the whole batch (services with their
   * billing state, plan history, plans, pending charges, and the termination rule's switch).
   */
  async compute(
    manager: EntityManager,
    tenantId: string,
    day: RunDay,
    subscribers: DueSubscriber[],
  ): Promise<Billed[]> {
    const ids = subscribers.map((subscriber) => subscriber.subscriberId);
    const services = await this.runs.services(manager, tenantId, ids, day.previousStart);
    const { plans, billable } = await this.billable(manager, tenantId, services, day.previousStart);
    const pending = await this.charges.pendingOf(manager, tenantId, ids);
    const creditTermination = await this.terminationCredit(manager, tenantId);
    return subscribers.map((subscriber) => {
      const own = billable.filter((service) => service.subscriberId === subscriber.subscriberId);
      const foreign = own
        .map((service) => plans.get(service.planId))
        .find((plan) => plan !== undefined && plan.currency !== subscriber.currency);
      if (foreign) {
        return {
          subscriber,
          error: `plan ${foreign.id} is priced in ${foreign.currency}; the subscriber is billed in ${subscriber.currency}`,
        };
      }
      try {
        const run = runLines({ asOf: day.asOf, services: own, plans, creditTermination });
        // Pending charges in the subscriber's currency ride along (one in another currency waits for an invoice
        // in it).
        const charges = pending.filter(
          (charge) =>
            charge.subscriberId === subscriber.subscriberId && charge.currency === subscriber.currency,
        );
        // Adjustments first (true-ups, arrears, and the settlements of services that ended), then what is billed in
        // advance, then the one-off charges.
        const inAdvance = (line: InvoiceLine) =>
          line.plan_id !== undefined && line.period_start !== undefined && line.period_start >= day.asOf;
        const settlements = charges.filter((charge) => charge.source === ChargeSource.Termination);
        const others = charges.filter((charge) => charge.source !== ChargeSource.Termination);
        const lines = [
          ...run.lines.filter((line) => !inAdvance(line)),
          ...settlements.map(chargeLine),
          ...run.lines.filter(inAdvance),
          ...others.map(chargeLine),
        ];
        return {
          subscriber,
          lines: {
            lines,
            total: lines.reduce((sum, line) => sum + line.amount, 0),
            states: run.states,
            chargeIds: [...settlements, ...others].map((charge) => charge.id),
          },
        };
      } catch (error) {
        return { subscriber, error: (error as Error).message };
      }
    });
  }

  /** The services as the pure functions take them, with every plan they name. */
  private async billable(
    manager: EntityManager,
    tenantId: string,
    services: ServiceRow[],
    earliest: string,
  ): Promise<{ plans: Map<string, PlanInfo>; billable: (BillableService & { subscriberId: string })[] }> {
    // A service untouched since before the first day billing looks at has been on its plan all along: no history.
    const changed = services
      .filter((service) => {
        const from = [
          earliest,
          service.billedUntil ?? earliest,
          ...service.openCharges.map((c) => c.from),
        ].sort()[0];
        return service.updatedAt >= new Date(`${from}T00:00:00.000Z`);
      })
      .map((service) => service.id);
    const history = await this.runs.planChanges(manager, tenantId, changed);
    const planIds = new Set<string>([
      ...services.map((service) => service.planId),
      ...history.map((change) => change.planId),
      ...services.flatMap((service) => service.openCharges.map((charge) => charge.plan_id)),
    ]);
    const plans = new Map<string, PlanInfo>(
      (await this.runs.plans(manager, tenantId, [...planIds])).map((plan) => [plan.id, plan]),
    );
    const changesOf = new Map<string, { on: string; planId: string }[]>();
    for (const change of history) {
      changesOf.set(change.serviceId, [
        ...(changesOf.get(change.serviceId) ?? []),
        { on: utcDay(change.at), planId: change.planId },
      ]);
    }
    return {
      plans,
      billable: services.map((service) => ({
        id: service.id,
        subscriberId: service.subscriberId,
        planId: service.planId,
        billedInAdvance: service.status === 'active' || service.status === 'suspended',
        activatedOn: service.activatedAt ? utcDay(service.activatedAt) : null,
        terminatedOn: service.terminatedAt ? utcDay(service.terminatedAt) : null,
        planChanges: changesOf.get(service.id) ?? [],
        billedUntil: service.billedUntil,
        openCharges: service.openCharges,
      })),
    };
  }

  /**
   * Settles services that just ended, in the transaction that ends them: their advance charges are trued up (unused
   * days credited, unless the termination_billing rule is off) and days not billed yet charged, as pending charges the
   * subscriber's next invoice carries; so a termination's credit is never lost, whatever happens to the subscriber
   * before the next run.
   */
  async settleEnded(tx: Tx, tenantId: string, serviceIds: string[]): Promise<void> {
    const { manager } = tx;
    const services = (await this.runs.servicesByIds(manager, tenantId, serviceIds)).filter(
      (service) => service.terminatedAt !== null,
    );
    if (services.length === 0) {
      return;
    }
    const profiles = await this.profiles.effectiveFor(manager, tenantId, [
      ...new Set(services.map((service) => service.subscriberId)),
    ]);
    const { plans, billable } = await this.billable(
      manager,
      tenantId,
      services,
      addMonths(utcDay(services[0].terminatedAt!), -NEVER_BILLED_MONTHS),
    );
    const creditTermination = await this.terminationCredit(manager, tenantId);
    const now = new Date();
    const charges: Charge[] = [];
    const states: (ServiceBillingState & { subscriberId: string })[] = [];
    for (const service of billable) {
      const profile = profiles.get(service.subscriberId);
      if (!profile || service.terminatedOn === null) {
        continue; // Never billed (no profile): nothing to settle.
      }
      const settled = settleService({
        service,
        plans,
        billingDay: profile.billingDay,
        until: service.terminatedOn,
        arrearsFrom: addMonths(service.terminatedOn, -NEVER_BILLED_MONTHS),
        creditTermination,
        advance: false,
      });
      for (const line of settled.lines) {
        charges.push(
          Object.assign(new Charge(), {
            tenantId,
            id: newId('chg', now),
            subscriberId: service.subscriberId,
            serviceId: service.id,
            description: line.description,
            quantity: 1,
            unitAmount: line.amount,
            amount: line.amount,
            currency: profile.currency,
            status: ChargeStatus.Pending,
            source: ChargeSource.Termination,
            sourceId: service.id,
            periodStart: line.period_start ?? null,
            periodEnd: line.period_end ?? null,
            invoiceId: null,
            creditId: null,
            invoicedAt: null,
            createdAt: now,
          }),
        );
      }
      if (settled.changed) {
        states.push({ ...settled.state, subscriberId: service.subscriberId });
      }
    }
    await this.charges.insertMany(manager, charges);
    await this.runs.saveStates(manager, tenantId, states, now);
    await this.events.appendMany(
      tx,
      charges.map((charge) => ({
        tenantId,
        type: 'charge.created' as const,
        subjectId: charge.id,
        object: ChargeDto.from(charge),
      })),
    );
  }

  /** The batch's writes; answers its figures (only what this batch's claim won counts). */
  private async write(tx: Tx, run: BillingRun, day: RunDay, billed: Billed[]): Promise<BatchFigures> {
    const { manager } = tx;
    const now = new Date();
    const periodEnd = addMonths(day.asOf, 1);
    const computed = billed.filter(
      (each): each is Extract<Billed, { lines: SubscriberLines }> => 'lines' in each,
    );
    // A subscriber with nothing to bill is not claimed: the period stays open to a later run of the day.
    const ok = computed.filter((each) => each.lines.lines.length > 0);
    const periods = ok.map((each) =>
      Object.assign(new BillingPeriod(), {
        tenantId: run.tenantId,
        subscriberId: each.subscriber.subscriberId,
        periodStart: day.asOf,
        periodEnd,
        runId: run.id,
        invoiceId: each.lines.total >= 0 ? newId('inv', now) : null,
        creditId: each.lines.total < 0 ? newId('txn', now) : null,
        charges: each.lines.lines
          .filter((line) => line.plan_id !== undefined && line.period_start === day.asOf && line.amount > 0)
          .map((line) => ({ service_id: line.service_id!, plan_id: line.plan_id!, amount: line.amount })),
        createdAt: now,
      }),
    );
    const claimed = await this.runs.claimPeriods(manager, periods);
    const won = periods.filter((period) => claimed.has(period.subscriberId));
    const linesOf = new Map(ok.map((each) => [each.subscriber.subscriberId, each]));
    const invoicing = won.filter((period) => period.invoiceId !== null);
    let number =
      invoicing.length > 0 ? await this.invoices.reserveNumbers(manager, run.tenantId, invoicing.length) : 0;
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
        voidReason: null,
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
    await this.invoices.insertMany(manager, invoices);
    await this.transactions.insertMany(manager, credits);
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
    // The subscribers' money not applied yet pays their new invoices (auto-apply), before the ledger posting: it
    // locks that money, and the balance rows are the last locks taken.
    await this.autoApply.toIssuedInvoices(tx, invoices);
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
    if (!(await this.ledger.postMany(manager, ledger, MAX_AMOUNT))) {
      // The batch is billed again one subscriber at a time, and the one at fault reported.
      throw new Error('a balance would pass the largest amount kept');
    }
    await this.charges.markInvoiced(
      manager,
      run.tenantId,
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
    await this.runs.saveStates(
      manager,
      run.tenantId,
      computed
        .filter((each) => wonIds.has(each.subscriber.subscriberId) || each.lines.lines.length === 0)
        .flatMap((each) =>
          each.lines.states.map((state) => ({ ...state, subscriberId: each.subscriber.subscriberId })),
        ),
      now,
    );
    await this.runs.insertItems(manager, [
      ...won.map((period) =>
        this.item(run, linesOf.get(period.subscriberId)!, period.invoiceId, period.creditId, now),
      ),
      ...billed.filter((each) => 'error' in each).map((each) => this.item(run, each, null, null, now)),
    ]);
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
