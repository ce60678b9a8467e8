import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import type { Tx } from '../../database/transaction-runner';
import { type Subscriber, SubscribersService } from '../../subscribers';
import type { Charge } from '../charges/charge.entity';
import { ChargeSource } from '../charges/charge.entity';
import { ChargesService } from '../charges/charges.service';
import type { LateFeeDue } from '../collections/collections.repository';
import { CollectionsService, type SweepRequest, type Swept } from '../collections/collections.service';
import { InvoicesService } from '../invoices/invoices.service';
import { BillingProfilesService } from '../profiles/billing-profiles.service';
import { lateFeeAmount } from './late-fee';

/**
 * A billing profile's fees (docs/billing.md, "Fees"), for the automation rules that charge them: a late fee per
 * overdue invoice, a reconnection fee per lifted non-payment suspension, and whether unpaid fees keep a suspension.
 * Each charge is recorded under the subscriber's row lock (first in the lock order) by ChargesService.record, whose
 * unique (source, source_id) makes it once however often a rule runs.
 */
@Injectable()
export class FeesService {
  constructor(
    private readonly collections: CollectionsService,
    private readonly charges: ChargesService,
    private readonly invoices: InvoicesService,
    private readonly subscribers: SubscribersService,
    private readonly profiles: BillingProfilesService,
  ) {}

  /**
   * The invoices that earn a late fee by `today`, passing `filter`, oldest due first from `from` (none locked), and
   * where the next sweep resumes (CollectionsService's SweepRequest).
   */
  lateFeesDue(manager: EntityManager, request: SweepRequest): Promise<Swept<LateFeeDue>> {
    return this.collections.lateFeesDue(manager, request);
  }

  /**
   * late_fee, in the caller's transaction: locks the subscriber, checks again that the invoice earns a late fee, and
   * charges it (source late_fee, source_id the invoice), then issues it at once on an invoice of its own (with any
   * other pending charge in its currency), due after the profile's payment terms, so that it can become overdue.
   * Null when the invoice does not earn one (any more) or was charged already.
   */
  async chargeLateFee(
    tx: Tx,
    tenantId: string,
    subscriberId: string,
    invoiceId: string,
    today: string,
  ): Promise<Charge | null> {
    const subscriber = await this.subscribers.lockIn(tx.manager, tenantId, subscriberId);
    const due = await this.collections.lateFeeDueOn(tx.manager, today, tenantId, invoiceId);
    const profile =
      due && (await this.profiles.profileFor(tx.manager, tenantId, subscriber.billingProfileId));
    const amount = profile ? lateFeeAmount(profile, due.base) : 0;
    if (!due || !profile || amount <= 0) {
      return null;
    }
    const charge = await this.charges.record(tx, {
      tenantId,
      subscriberId,
      serviceId: null,
      description: `Late fee for invoice ${due.number}`,
      unitAmount: amount,
      quantity: 1,
      currency: due.currency,
      source: ChargeSource.LateFee,
      sourceId: invoiceId,
    });
    if (charge) {
      await this.invoices.issuePending(tx, subscriber, due.currency, profile.paymentTermsDays);
    }
    return charge;
  }

  /**
   * reconnection_fee, in the caller's transaction: the reconnection fee of the profile the subscriber bills through,
   * as a pending charge its next invoice carries (source reconnection_fee, source_id the event of the suspension it
   * ends, so once per suspension). Null when the profile has none or it was charged already.
   */
  async chargeReconnectionFee(
    tx: Tx,
    tenantId: string,
    subscriberId: string,
    suspensionEventId: string,
  ): Promise<Charge | null> {
    const subscriber = await this.subscribers.lockIn(tx.manager, tenantId, subscriberId);
    const profile = await this.profiles.profileFor(tx.manager, tenantId, subscriber.billingProfileId);
    if (!profile?.reconnectionFee) {
      return null;
    }
    return this.charges.record(tx, {
      tenantId,
      subscriberId,
      serviceId: null,
      description: 'Reconnection fee',
      unitAmount: profile.reconnectionFee,
      quantity: 1,
      currency: profile.currency,
      source: ChargeSource.ReconnectionFee,
      sourceId: suspensionEventId,
    });
  }

  /**
   * fees_before_restoration: whether the subscriber's profile asks for fees to be paid before a non-payment
   * suspension is lifted and the subscriber still owes some (a late fee invoice or fee lines not paid, pending fee
   * charges that the money received and not yet applied does not cover).
   */
  async feesHoldSuspension(manager: EntityManager, subscriber: Subscriber): Promise<boolean> {
    const profile = await this.profiles.profileFor(manager, subscriber.tenantId, subscriber.billingProfileId);
    return (
      profile?.feesBeforeRestoration === true &&
      (await this.collections.owesFees(manager, subscriber.tenantId, subscriber.id))
    );
  }
}
