import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { utcDay } from '../../common/clock';
import { addMonths } from '../../common/dates';
import { groupBy } from '../../common/group-by';
import { ChargeSource } from '../charges/charge.entity';
import { chargeLine } from '../charges/charge-line';
import { ChargesRepository } from '../charges/charges.repository';
import type { InvoiceLine } from '../invoices/invoice.entity';
import { InvoiceTaxes, type TaxContext, taxLines } from '../taxes/invoice-taxes';
import type { TaxRateInfo, TaxSummaryRow } from '../taxes/tax-computation';
import { TaxContextRepository } from '../taxes/tax-context.repository';
import type { DueSubscriber } from './billing-periods.repository';
import { ServiceBillingRepository, type ServiceRow } from './service-billing.repository';
import type { BillableService, PlanInfo } from './plan-days';
import { NEVER_BILLED_MONTHS, type ServiceBillingState, runLines } from './proration';
import { TerminationCredit } from './termination-credit';

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
  /** Taxed (InvoiceTaxes). */
  lines: InvoiceLine[];
  /** What the invoice owes (or, below zero, the credit): the lines' nets and taxes. */
  total: number;
  taxAmount: number;
  taxes: TaxSummaryRow[];
  /** Each service's billing state after the lines (those that changed). */
  states: ServiceBillingState[];
  /** The pending charges the lines carry. */
  chargeIds: string[];
}

/** One subscriber's outcome in a batch. */
export type Billed =
  { subscriber: DueSubscriber; lines: SubscriberLines } | { subscriber: DueSubscriber; error: string };

/** A subscriber whose lines were computed (possibly none), not one in error. */
export type Computed = Extract<Billed, { lines: SubscriberLines }>;

/** Subscribers computed between two turns of the event loop. */
const COMPUTE_SLICE = 50;

/**
 * `each` of the items, a slice at a time, the event loop let go in between: the API's requests are served beside a
 * bill run's batch, not after it (docs/performance.md, billing.mixed).
 */
async function inSlices<T, R>(items: readonly T[], each: (item: T) => R): Promise<R[]> {
  const results: R[] = [];
  for (const [index, item] of items.entries()) {
    if (index > 0 && index % COMPUTE_SLICE === 0) {
      await new Promise((resolve) => setImmediate(resolve));
    }
    results.push(each(item));
  }
  return results;
}

/** A batch's outcomes, and the tax contexts and rates they were computed with. */
export interface ComputedBatch {
  billed: Billed[];
  taxContexts: Omit<TaxContext, 'rates'>[];
  rates: ReadonlyMap<string, TaxRateInfo>;
}

/** A service as the pure functions (proration.ts) take it, with its subscriber. */
export type SubscriberService = BillableService & { subscriberId: string };

/**
 * What subscribers are billed on a day, read and computed, written by no one here: the bill run's batches
 * (BatchBiller), the upcoming invoice, and the settlement of ended services (ServiceSettlement) take it from here.
 */
@Injectable()
export class BillComputation {
  constructor(
    private readonly serviceBilling: ServiceBillingRepository,
    private readonly charges: ChargesRepository,
    private readonly taxes: InvoiceTaxes,
    private readonly taxReads: TaxContextRepository,
    private readonly terminationCredit: TerminationCredit,
  ) {}

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
    return (await this.computeBatch(manager, tenantId, day, subscribers, true)).billed;
  }

  /**
   * compute, with the tax rates share-locked or (`lockRates` false: a bill run's batch computing while the one
   * before it writes) read unlocked; answers what decided the taxes beside the outcomes, for InvoiceTaxes.stillAsRead
   * to check once the batch holds its turn.
   */
  async computeBatch(
    manager: EntityManager,
    tenantId: string,
    day: RunDay,
    subscribers: DueSubscriber[],
    lockRates: boolean,
  ): Promise<ComputedBatch> {
    const ids = subscribers.map((subscriber) => subscriber.subscriberId);
    const services = await this.serviceBilling.services(manager, tenantId, ids, day.previousStart);
    const { plans, billable } = await this.billable(manager, tenantId, services, day.previousStart);
    const pending = await this.charges.pendingOf(manager, tenantId, ids);
    const creditTermination = await this.terminationCredit.appliesTo(manager, tenantId);
    // What decides the taxes (InvoiceTaxes: the one computation), for the whole batch.
    const taxOf = await this.taxReads.subscribers(manager, tenantId, ids);
    const planTaxes = await this.taxReads.plans(manager, tenantId, [...plans.keys()]);
    const chargeTaxes = await this.taxReads.charges(
      manager,
      tenantId,
      pending.map((charge) => charge.id),
    );
    const contexts = new Map(
      ids.map((id) => [
        id,
        { ...(taxOf.get(id) ?? { exempt: false, defaults: [] }), plans: planTaxes, charges: chargeTaxes },
      ]),
    );
    const rates = await this.taxes.ratesFor(manager, tenantId, contexts.values(), [], lockRates);
    const servicesOf = groupBy(billable, (service) => service.subscriberId);
    const pendingOf = groupBy(pending, (charge) => charge.subscriberId);
    const one = (subscriber: DueSubscriber): Billed => {
      const own = servicesOf.get(subscriber.subscriberId) ?? [];
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
        const charges = (pendingOf.get(subscriber.subscriberId) ?? []).filter(
          (charge) => charge.currency === subscriber.currency,
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
        const taxed = taxLines(lines, { ...contexts.get(subscriber.subscriberId)!, rates });
        return {
          subscriber,
          lines: {
            lines: taxed.lines,
            total: taxed.total,
            taxAmount: taxed.taxAmount,
            taxes: taxed.taxes,
            states: run.states,
            chargeIds: [...settlements, ...others].map((charge) => charge.id),
          },
        };
      } catch (error) {
        return { subscriber, error: (error as Error).message };
      }
    };
    const billed = await inSlices(subscribers, one);
    return { billed, taxContexts: [...contexts.values()], rates };
  }

  /** The services as the pure functions take them, with every plan they name. */
  async billable(
    manager: EntityManager,
    tenantId: string,
    services: ServiceRow[],
    earliest: string,
  ): Promise<{ plans: Map<string, PlanInfo>; billable: SubscriberService[] }> {
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
    const history = await this.serviceBilling.planChanges(manager, tenantId, changed);
    const planIds = new Set<string>([
      ...services.map((service) => service.planId),
      ...history.map((change) => change.planId),
      ...services.flatMap((service) => service.openCharges.map((charge) => charge.plan_id)),
    ]);
    const plans = new Map<string, PlanInfo>(
      (await this.serviceBilling.plans(manager, tenantId, [...planIds])).map((plan) => [plan.id, plan]),
    );
    const changesOf = new Map<string, { on: string; planId: string }[]>();
    for (const change of history) {
      const changes = changesOf.get(change.serviceId) ?? [];
      changes.push({ on: utcDay(change.at), planId: change.planId });
      changesOf.set(change.serviceId, changes);
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
}
