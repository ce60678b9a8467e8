import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { FeesService } from '../billing';
import { Clock } from '../common/clock';
import { automationScope } from '../common/request-context';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { TransactionRunner, type Tx } from '../database/transaction-runner';
import { EventsRepository, type LogEvent } from '../events';
import { type Subscriber, SubscriberStatus, SuspensionReason } from '../subscribers';
import { AutomationRepository } from './automation.repository';
import { SweepTarget } from './sweep-cursors';

/**
 * The fee rules (docs/automation.md): late_fee, a sweep, and reconnection_fee, a reaction to a status change; and the
 * fees_before_restoration check paid_up makes. Billing's FeesService charges the fees; this decides when.
 */
@Injectable()
export class FeeRules {
  private readonly logger = new Logger('AutomationWorker');
  private readonly live: SweepTarget<'late_fees'>;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly clock: Clock,
    private readonly transactionRunner: TransactionRunner,
    private readonly automation: AutomationRepository,
    private readonly eventLog: EventsRepository,
    private readonly fees: FeesService,
  ) {
    this.live = SweepTarget.live(config.automation.sweepPageSize);
  }

  /**
   * late_fee: each invoice that earns a late fee today is charged it, in a transaction of its own that locks the
   * subscriber first (the invoice issued for the fee takes the subscriber's money after it). The charge's unique
   * (late_fee, invoice) makes it once, whatever the sweeps, instances and retries.
   */
  async sweepLateFees(target: SweepTarget<'late_fees'> = this.live): Promise<boolean> {
    const today = this.clock.today();
    const due = await this.fees.lateFeesDue(
      this.dataSource.manager,
      target.request('late_fees', today, this.automation.ruleOn('late_fee')),
    );
    for (const { tenantId, subscriberId, invoiceId } of due.items) {
      await this.transactionRunner
        .run(automationScope('late_fee'), async (tx) => {
          // The rule may have been turned off since the read.
          if ((await this.automation.disabled(tx.manager, [tenantId])).has(`${tenantId}/late_fee`)) {
            return;
          }
          await this.fees.chargeLateFee(tx, tenantId, subscriberId, invoiceId, today);
        })
        .catch((error: Error) =>
          this.logger.warn({ msg: 'late fee failed', invoice_id: invoiceId, err: error.message }),
        );
    }
    return target.moved('late_fees', due.next);
  }

  /**
   * reconnection_fee: a move from suspended to active that ends a suspension for non_payment (the subscriber's latest
   * move into suspended before it, whoever made either) charges the profile's reconnection fee, once per suspension.
   */
  async reconnected(tx: Tx, event: LogEvent, subscriberId: string): Promise<void> {
    if (
      event.type !== 'subscriber.status_changed' ||
      event.data.from !== SubscriberStatus.Suspended ||
      event.data.to !== SubscriberStatus.Active
    ) {
      return;
    }
    const suspension = await this.eventLog.suspensionBefore(tx.manager, event, subscriberId);
    if (suspension?.reason !== SuspensionReason.NonPayment) {
      return;
    }
    await this.fees.chargeReconnectionFee(tx, event.tenantId, subscriberId, suspension.id);
  }

  /** paid_up: whether unpaid fees keep the subscriber's non-payment suspension (fees_before_restoration). */
  feesHoldSuspension(manager: EntityManager, subscriber: Subscriber): Promise<boolean> {
    return this.fees.feesHoldSuspension(manager, subscriber);
  }
}
