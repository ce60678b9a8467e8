import { Injectable } from '@nestjs/common';
import { Clock, utcDay } from '../../common/clock';
import { addMonths } from '../../common/dates';
import { newId } from '../../common/ids';
import type { Tx } from '../../database/transaction-runner';
import { EventsService } from '../../events';
import { Charge, ChargeSource, ChargeStatus } from '../charges/charge.entity';
import { ChargeDto } from '../charges/dto/charge.dto';
import { ChargesRepository } from '../charges/charges.repository';
import type { InvoiceLine } from '../invoices/invoice.entity';
import { BillingProfilesRepository } from '../profiles/billing-profiles.repository';
import { TaxContextRepository } from '../taxes/tax-context.repository';
import { BillComputation, type SubscriberService } from './bill-computation';
import { ServiceBillingRepository } from './service-billing.repository';
import { NEVER_BILLED_MONTHS, type ServiceBillingState, settleService } from './proration';
import { TerminationCredit } from './termination-credit';

/**
 * Settles services that just ended, in the transaction that ends them: their advance charges are trued up (unused
 * days credited, unless the termination_billing rule is off) and days not billed yet charged, as pending charges the
 * subscriber's next invoice carries; so a termination's credit is never lost, whatever happens to the subscriber
 * before the next run.
 */
@Injectable()
export class ServiceSettlement {
  constructor(
    private readonly events: EventsService,
    private readonly serviceBilling: ServiceBillingRepository,
    private readonly charges: ChargesRepository,
    private readonly profiles: BillingProfilesRepository,
    private readonly taxReads: TaxContextRepository,
    private readonly computation: BillComputation,
    private readonly terminationCredit: TerminationCredit,
    private readonly clock: Clock,
  ) {}

  async settleEnded(tx: Tx, tenantId: string, serviceIds: string[]): Promise<void> {
    const { manager } = tx;
    const services = (await this.serviceBilling.servicesByIds(manager, tenantId, serviceIds)).filter(
      (service) => service.terminatedAt !== null,
    );
    if (services.length === 0) {
      return;
    }
    const profiles = await this.profiles.effectiveFor(manager, tenantId, [
      ...new Set(services.map((service) => service.subscriberId)),
    ]);
    const { plans, billable } = await this.computation.billable(
      manager,
      tenantId,
      services,
      addMonths(utcDay(services[0].terminatedAt!), -NEVER_BILLED_MONTHS),
    );
    const creditTermination = await this.terminationCredit.appliesTo(manager, tenantId);
    // A settlement line is taxed as the plan it settles is (its own rates; null: the profile's defaults).
    const planTaxes = await this.taxReads.plans(manager, tenantId, [...plans.keys()]);
    const now = this.clock.now();
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
        const taxRateIds = line.plan_id !== undefined ? (planTaxes.get(line.plan_id) ?? null) : null;
        charges.push(settlementCharge(tenantId, service, line, profile.currency, taxRateIds, now));
      }
      if (settled.changed) {
        states.push({ ...settled.state, subscriberId: service.subscriberId });
      }
    }
    await this.charges.insertMany(manager, charges);
    await this.serviceBilling.saveStates(manager, tenantId, states, now);
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
}

/** A settlement line of an ended service, as the pending charge the subscriber's next invoice carries. */
function settlementCharge(
  tenantId: string,
  service: SubscriberService,
  line: InvoiceLine,
  currency: string,
  taxRateIds: string[] | null,
  now: Date,
): Charge {
  return Object.assign(new Charge(), {
    tenantId,
    id: newId('chg', now),
    subscriberId: service.subscriberId,
    serviceId: service.id,
    description: line.description,
    quantity: 1,
    unitAmount: line.amount,
    amount: line.amount,
    currency,
    status: ChargeStatus.Pending,
    source: ChargeSource.Termination,
    sourceId: service.id,
    taxRateIds,
    periodStart: line.period_start ?? null,
    periodEnd: line.period_end ?? null,
    invoiceId: null,
    creditId: null,
    invoicedAt: null,
    createdAt: now,
  });
}
