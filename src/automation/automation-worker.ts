import { Inject, Injectable } from '@nestjs/common';
import { PolledWorker } from '../common/polled-worker';
import { ALLOCATABLE_KINDS, CollectionsService, type TransactionKind } from '../billing';
import { setTimeout as sleep } from 'node:timers/promises';
import { atFrozenTime, Clock } from '../common/clock';
import { isTransactionConflict } from '../common/errors/postgres-errors';
import { automationScope, SYSTEM_SCOPE } from '../common/request-context';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { TransactionRunner, type Tx } from '../database/transaction-runner';
import { EventsRepository, EventsService, type LogEvent } from '../events';
import { TenantTime } from '../gateway';
import { OrderAction, ServicesService } from '../provisioning';
import { SubscribersService, SubscriberStatus, SuspensionReason } from '../subscribers';
import { TicketsService, type CreateTicketDto } from '../tickets';
import { AutomationRepository } from './automation.repository';
import { DunningSweeps } from './dunning-sweeps';
import { FeeRules } from './fee-rules';
import { RULES, type RuleId } from './rules';

const CONSUMER = 'automation';
const BATCH = 200;
/** How long catchUp waits at most for another pass holding the cursor: 400 × 25 ms. */
const CATCH_UP_WAITS = 400;
const CATCH_UP_WAIT_MS = 25;

/** The event-driven rules, by the event types that trigger them (the overdue sweep and billing's rule run apart). */
export const REACTIONS: Partial<Record<string, RuleId[]>> = {};
for (const rule of RULES) {
  for (const trigger of rule.triggers) {
    if (trigger.includes('.')) {
      REACTIONS[trigger] = [...(REACTIONS[trigger] ?? []), rule.id];
    }
  }
}

/**
 * The automation rules at work. Each pass sweeps for overdue invoices (a state the clock creates, not an event) and
 * then reads the event log from its cursor: every event a rule reacts to is handled in the batch's transaction, each
 * rule inside a savepoint (one that fails is logged and does not undo the others), and the cursor moves in that same
 * transaction, so a crash between a change and its reaction loses nothing and a reaction is never done twice. The
 * cursor row is taken FOR UPDATE SKIP LOCKED: one instance reads at a time, the others skip.
 */
@Injectable()
export class AutomationWorker extends PolledWorker {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly clock: Clock,
    private readonly transactionRunner: TransactionRunner,
    private readonly events: EventsService,
    private readonly eventLog: EventsRepository,
    private readonly automation: AutomationRepository,
    private readonly collections: CollectionsService,
    private readonly subscribers: SubscribersService,
    private readonly services: ServicesService,
    private readonly tickets: TicketsService,
    private readonly fees: FeeRules,
    private readonly dunning: DunningSweeps,
    private readonly tenantTime: TenantTime,
  ) {
    super('AutomationWorker', 'automation pass failed');
  }

  protected pollMs(): number | null {
    return this.config.automation.enabled ? this.config.automation.pollMs : null;
  }

  protected async pass(): Promise<void> {
    await this.dunning.sweepOverdue();
    await this.dunning.sweepReminders();
    await this.fees.sweepLateFees();
    while (!this.loop.stopped && (await this.consume()) === 'more') {
      // a full batch: there may be more
    }
  }

  /**
   * Reads the log to its end now, waiting while another pass holds the cursor: a test clock's advance lets the rules
   * react to a day's events before it goes on to the next day (docs/test-clocks.md).
   */
  async catchUp(): Promise<void> {
    if (!this.config.automation.enabled) {
      return;
    }
    for (let waits = 0; waits < CATCH_UP_WAITS;) {
      const read = await this.consume();
      if (read === 'done') {
        return;
      }
      if (read === 'busy') {
        waits += 1;
        await sleep(CATCH_UP_WAIT_MS);
      }
    }
  }

  /** One batch of the log: 'more' when it was full, 'busy' when another pass holds the cursor. */
  private consume(): Promise<'more' | 'done' | 'busy'> {
    return this.transactionRunner.run(SYSTEM_SCOPE, async (tx) => {
      const cursor = await this.automation.lockCursor(tx.manager, CONSUMER);
      if (!cursor) {
        return 'busy';
      }
      const events = await this.eventLog.after(tx.manager, cursor.txId, cursor.eventId, BATCH);
      if (events.length === 0) {
        return 'done';
      }
      const relevant = events.filter((event) => REACTIONS[event.type] !== undefined);
      const tenants = [...new Set(relevant.map((event) => event.tenantId))];
      const disabled = await this.automation.disabled(tx.manager, tenants);
      // A test tenant's reactions happen at its clock's time.
      const frozen = await this.tenantTime.frozenTimes(tx.manager, tenants);
      for (const event of relevant) {
        for (const rule of REACTIONS[event.type] ?? []) {
          if (disabled.has(`${event.tenantId}/${rule}`)) {
            continue;
          }
          await atFrozenTime(frozen.get(event.tenantId) ?? null, () =>
            tx.savepoint('automation_rule', () =>
              this.react(tx.withScope(automationScope(rule)), rule, event),
            ),
          ).catch((error: Error) => {
            // A deadlock lost inside the rule: the whole batch runs again (TransactionRunner), the rule not skipped.
            if (isTransactionConflict(error)) {
              throw error;
            }
            this.logger.warn({
              msg: 'automation rule failed',
              rule,
              event_id: event.id,
              err: error.message,
            });
          });
        }
      }
      const last = events[events.length - 1];
      await this.automation.moveCursor(tx.manager, CONSUMER, last.txId, last.id);
      return events.length === BATCH ? 'more' : 'done';
    });
  }

  private async react(tx: Tx, rule: RuleId, event: LogEvent): Promise<void> {
    const object = event.data.object;
    const subscriberId =
      event.type === 'subscriber.status_changed'
        ? event.subjectId
        : (object.subscriber_id as string | undefined);
    if (!subscriberId) {
      return;
    }
    switch (rule) {
      case 'service_follows_subscriber':
        return this.followSubscriber(tx, event, subscriberId);
      case 'paid_up':
        return this.paidUp(tx, event, subscriberId);
      case 'failed_provisioning':
        return this.failedOrder(tx, event, subscriberId);
      case 'reconnection_fee':
        return this.fees.reconnected(tx, event, subscriberId);
      case 'overdue_invoices':
      case 'invoice_reminders':
      case 'late_fee':
      case 'termination_billing':
        // Not event-driven: the sweep and the bill runs apply them.
        return;
    }
  }

  private async followSubscriber(tx: Tx, event: LogEvent, subscriberId: string): Promise<void> {
    if (event.type === 'subscriber.status_changed') {
      const to = event.data.to as SubscriberStatus;
      const resume = event.data.from === SubscriberStatus.Suspended && to === SubscriberStatus.Active;
      await this.services.followSubscriber(tx, event.tenantId, subscriberId, to, resume);
      return;
    }
    // An order ended: a subscriber suspended or cancelled meanwhile gets what its change could not order then. A change
    // the log holds after this event is left to its own event: the state read here already shows it, and acting on it
    // from both would order it twice (the second after the first had failed, say). The log is read after the state,
    // so every change the state shows has its event in what the log read sees.
    const subscriber = await this.subscribers.findIn(tx.manager, event.tenantId, subscriberId);
    if (
      subscriber &&
      [SubscriberStatus.Suspended, SubscriberStatus.Cancelled].includes(subscriber.status) &&
      !(await this.eventLog.statusChangedAfter(tx.manager, event, subscriberId))
    ) {
      // A failed order's own action is not ordered again: the failure opened a ticket (failed_provisioning) for a
      // person to look at, where a retry loop would fail and ticket forever.
      const order = event.data.object as { service_id: string; action: OrderAction };
      const failed =
        event.type === 'provisioning_order.failed'
          ? { serviceId: order.service_id, action: order.action }
          : undefined;
      await this.services.followSubscriber(
        tx,
        event.tenantId,
        subscriberId,
        subscriber.status,
        false,
        failed,
      );
    }
  }

  private async paidUp(tx: Tx, event: LogEvent, subscriberId: string): Promise<void> {
    // Money received counts whether or not it was allocated; a debit or a refund only adds to what is owed.
    const kind = event.data.object.kind as TransactionKind;
    if (event.type === 'transaction.created' && !ALLOCATABLE_KINDS.includes(kind)) {
      return;
    }
    const subscriber = await this.subscribers.findIn(tx.manager, event.tenantId, subscriberId);
    if (
      subscriber?.status !== SubscriberStatus.Suspended ||
      subscriber.suspensionReason !== SuspensionReason.NonPayment ||
      (await this.collections.owesPastDue(tx.manager, event.tenantId, subscriberId, this.clock.today())) ||
      (await this.fees.feesHoldSuspension(tx.manager, subscriber))
    ) {
      return;
    }
    await this.subscribers.changeStatusIn(tx, event.tenantId, subscriberId, {
      status: SubscriberStatus.Active,
    });
  }

  private async failedOrder(tx: Tx, event: LogEvent, subscriberId: string): Promise<void> {
    const order = event.data.object as {
      id: string;
      service_id: string;
      action: string;
      last_error: string | null;
    };
    const first = await this.automation.claimEffect(tx.manager, {
      tenantId: event.tenantId,
      rule: 'failed_provisioning',
      subjectId: order.id,
      resultId: null,
      createdAt: this.clock.now(),
    });
    if (!first) {
      return;
    }
    await this.tickets.createIn(tx, event.tenantId, failedOrderTicket(order, subscriberId));
  }
}

/**
 * failed_provisioning's ticket: high priority, an installation when the service never came up (activate), an incident
 * otherwise, naming the order, its action and its error, within a ticket's subject and description lengths.
 */
export function failedOrderTicket(
  order: { id: string; service_id: string; action: string; last_error: string | null },
  subscriberId: string,
): CreateTicketDto {
  const error = order.last_error ?? 'no error recorded';
  return {
    subject: `Provisioning failed: ${order.action} of service ${order.service_id}`.slice(0, 200),
    description: `Provisioning order ${order.id} (${order.action}) failed: ${error}`.slice(0, 10_000),
    type: order.action === 'activate' ? 'installation' : 'incident',
    priority: 'high',
    subscriber_id: subscriberId,
    tags: ['provisioning'],
    metadata: { provisioning_order_id: order.id, service_id: order.service_id },
  } as CreateTicketDto;
}
