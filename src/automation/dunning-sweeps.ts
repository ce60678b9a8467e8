import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { CollectionsService, InvoiceDto } from '../billing';
import { Clock } from '../common/clock';
import { daysBetween } from '../common/dates';
import { automationScope } from '../common/request-context';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { TransactionRunner } from '../database/transaction-runner';
import { EventsService } from '../events';
import { SubscribersService, SubscriberStatus, SuspensionReason, type ChangeStatusDto } from '../subscribers';
import { AutomationRepository } from './automation.repository';
import { SweepTarget } from './sweep-cursors';

export type DunningSweep = 'overdue' | 'suspend' | 'reminders';

/**
 * The dunning sweeps (docs/automation.md): overdue_invoices and invoice_reminders, states the clock creates rather
 * than events. Billing's CollectionsService says what is really owed; the once-only bookkeeping (automation_effects)
 * and the per-tenant switch are this module's, handed to its queries as a SubjectFilter. Each sweep reads a bounded
 * part of the invoices past due per pass and resumes there on the next (SweepCursors).
 */
@Injectable()
export class DunningSweeps {
  private readonly logger = new Logger('AutomationWorker');
  private readonly live: SweepTarget<DunningSweep>;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly clock: Clock,
    private readonly transactionRunner: TransactionRunner,
    private readonly events: EventsService,
    private readonly automation: AutomationRepository,
    private readonly collections: CollectionsService,
    private readonly subscribers: SubscribersService,
  ) {
    this.live = SweepTarget.live(config.automation.sweepPageSize);
  }

  /**
   * overdue_invoices: announce each invoice once, then suspend who is past the profile's grace. True when there is
   * more to read (`target` one tenant's: it is swept again until false).
   */
  async sweepOverdue(target: SweepTarget<DunningSweep> = this.live): Promise<boolean> {
    const today = this.clock.today();
    const scope = automationScope('overdue_invoices');
    const next = await this.transactionRunner.run(scope, async (tx) => {
      const overdue = await this.collections.overdueInvoices(
        tx.manager,
        target.request('overdue', today, this.automation.pending('overdue_invoices')),
      );
      for (const invoice of overdue.items) {
        const first = await this.automation.claimEffect(tx.manager, {
          tenantId: invoice.tenantId,
          rule: 'overdue_invoices',
          subjectId: invoice.id,
          resultId: null,
          createdAt: this.clock.now(),
        });
        if (first) {
          await this.events.append(tx, {
            tenantId: invoice.tenantId,
            type: 'invoice.overdue',
            subjectId: invoice.id,
            object: InvoiceDto.from(invoice, today),
            details: { days_overdue: daysBetween(invoice.dueDate, today) },
          });
        }
      }
      return overdue.next;
    });
    const moreOverdue = target.moved('overdue', next);
    const suspend: ChangeStatusDto = {
      status: SubscriberStatus.Suspended,
      reason: SuspensionReason.NonPayment,
    };
    const toSuspend = await this.collections.subscribersToSuspend(
      this.dataSource.manager,
      target.request('suspend', today, this.automation.ruleOn('overdue_invoices')),
    );
    for (const subscriber of toSuspend.items) {
      await this.transactionRunner
        .run(scope, (tx) => this.subscribers.changeStatusIn(tx, subscriber.tenantId, subscriber.id, suspend))
        .catch((error: Error) =>
          this.logger.warn({
            msg: 'non-payment suspension failed',
            subscriber_id: subscriber.id,
            err: error.message,
          }),
        );
    }
    // A suspension that failed is tried again when the sweep comes back to it.
    return target.moved('suspend', toSuspend.next) || moreOverdue;
  }

  /**
   * invoice_reminders: one invoice.reminder per invoice and offset of its profile's reminder_offsets, on the day
   * due_date + offset, while the invoice is really owed. An invoice first seen with several offsets past gets only the
   * latest (billing's dueReminders answers that one); the earlier ones are never sent after it.
   */
  async sweepReminders(target: SweepTarget<DunningSweep> = this.live): Promise<boolean> {
    const today = this.clock.today();
    const next = await this.transactionRunner.run(automationScope('invoice_reminders'), async (tx) => {
      const due = await this.collections.dueReminders(
        tx.manager,
        target.request('reminders', today, this.automation.pending('invoice_reminders')),
      );
      for (const { invoice, offsetDays, amountDue } of due.items) {
        const first = await this.automation.claimEffect(tx.manager, {
          tenantId: invoice.tenantId,
          rule: 'invoice_reminders',
          subjectId: `${invoice.id}:${offsetDays}`,
          resultId: null,
          createdAt: this.clock.now(),
        });
        if (first) {
          await this.events.append(tx, {
            tenantId: invoice.tenantId,
            type: 'invoice.reminder',
            subjectId: invoice.id,
            object: InvoiceDto.from(invoice, today),
            details: { offset_days: offsetDays, amount_due: amountDue },
          });
        }
      }
      return due.next;
    });
    return target.moved('reminders', next);
  }
}
