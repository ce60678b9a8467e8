import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Clock } from '../../common/clock';
import { newId } from '../../common/ids';
import { PolledWorker } from '../../common/polled-worker';
import { SYSTEM_SCOPE } from '../../common/request-context';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';
import { TransactionRunner } from '../../database/transaction-runner';
import { EventsService } from '../../events';
import { NotificationDto } from '../dto/notification.dto';
import { isNotificationKind } from '../kinds';
import { MailSender, type SendOutcome } from '../mail/mail-sender';
import { Notification, NotificationAttempt, NotificationStatus } from '../notification.entity';
import { type NotificationOutcome, NotificationsRepository } from '../notifications.repository';
import { NotificationContent, type PreparedNotification } from './notification-content';

/** ±10 %, so notifications that failed together are not all tried again at the same instant. */
const jitter = (seconds: number): number => seconds * (0.9 + Math.random() * 0.2);

/** When attempt `attempt` (1 for the first) that ended `outcome` is tried again, in seconds; null when it is not. */
export function notificationRetryInS(
  attempt: number,
  outcome: SendOutcome,
  delays: readonly number[],
): number | null {
  if (outcome.status !== 'temporary' || attempt > delays.length) {
    return null;
  }
  return jitter(delays[attempt - 1]);
}

/**
 * Sends the notifications the outbox queued. Each pass claims due ones with FOR UPDATE SKIP LOCKED and a lease, so
 * instances share the work and none sends a notification another holds; one whose worker died is taken up again
 * once its lease ends, with the same Message-ID. A temporary failure (4xx, a timeout) is tried again after
 * NOTIFICATION_RETRY_DELAYS_S; a permanent one (5xx) fails with the server's answer.
 */
@Injectable()
export class NotificationWorker extends PolledWorker {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly transactionRunner: TransactionRunner,
    private readonly events: EventsService,
    private readonly notifications: NotificationsRepository,
    private readonly content: NotificationContent,
    private readonly sender: MailSender,
    private readonly clock: Clock,
  ) {
    super('NotificationWorker', 'notification pass failed');
  }

  override onApplicationBootstrap(): void {
    if (this.config.notifications.workerEnabled) {
      this.events.onDeliveriesQueued(() => this.loop.wake());
    }
    super.onApplicationBootstrap();
  }

  protected pollMs(): number | null {
    return this.config.notifications.workerEnabled ? this.config.notifications.pollMs : null;
  }

  protected async pass(): Promise<void> {
    const batch = this.config.notifications.concurrency;
    for (;;) {
      if (this.loop.stopped) {
        return;
      }
      const claimed = await this.notifications.claim(
        this.dataSource.manager,
        this.config.notifications.leaseMs,
        batch,
      );
      await Promise.all(claimed.map((notification) => this.process(notification)));
      if (claimed.length < batch) {
        return;
      }
    }
  }

  private async process(notification: Notification): Promise<void> {
    const { manager } = this.dataSource;
    const { tenantId, kind } = notification;
    if (!isNotificationKind(kind)) {
      return;
    }
    // The tenant's settings first: a tenant without a mail server skips it without its event or subscriber read.
    const channel = await this.content.channel(manager, { tenantId, kind });
    if (typeof channel === 'string') {
      const skip = { skip: channel, subscriberId: notification.subscriberId, recipient: null };
      await this.finish(notification, skip, null, null);
      return;
    }
    const event = await this.events.find(tenantId, notification.eventId);
    if (!event) {
      return;
    }
    const prepared = await this.content.prepare(
      manager,
      { id: notification.id, tenantId, kind, subscriberId: notification.subscriberId, event },
      channel,
    );
    if (prepared.skip !== null) {
      await this.finish(notification, prepared, null, null);
      return;
    }
    const rate = this.config.notifications.ratePerMinute;
    const reserved = await this.transactionRunner.run(SYSTEM_SCOPE, (tx) =>
      this.notifications.reserveSend(tx.manager, notification, rate),
    );
    if (!reserved) {
      await this.notifications.postpone(manager, notification, jitter(60));
      return;
    }
    const startedAt = this.clock.now();
    const outcome = await this.sender.send(prepared.server, prepared.mail, {
      // The instance's server (SMTP_URL) may be a local relay; a tenant's own must resolve to public addresses.
      allowPrivate: !prepared.ownServer || this.config.mailAllowPrivate,
    });
    await this.finish(notification, prepared, outcome, this.clock.now().getTime() - startedAt.getTime());
  }

  /**
   * Records what became of the notification: skipped, its row alone; tried, its row, its attempt, and
   * notification.sent or .failed, in one transaction.
   */
  private async finish(
    notification: Notification,
    prepared: PreparedNotification,
    outcome: SendOutcome | null,
    durationMs: number | null,
  ): Promise<void> {
    const attempt = notification.attempts + (outcome ? 1 : 0);
    const retryInS = outcome
      ? notificationRetryInS(attempt, outcome, this.config.notifications.retryDelaysS)
      : null;
    const result: NotificationOutcome = {
      ...statusOf(prepared, outcome, retryInS),
      subscriberId: prepared.subscriberId,
      recipient: prepared.recipient,
      subject: prepared.skip === null ? prepared.mail.subject : null,
      messageId: prepared.skip === null ? (prepared.mail.message_id ?? null) : null,
      attempts: attempt,
      retryInS,
    };
    if (!outcome) {
      // Skipped: the notification's own row is all there is to write, one statement.
      const recorded = await this.notifications.finish(this.dataSource.manager, notification, result);
      if (!recorded) {
        this.leaseLost(notification);
      }
      return;
    }
    await this.transactionRunner.run(SYSTEM_SCOPE, async (tx) => {
      const recorded = await this.notifications.finish(tx.manager, notification, result);
      if (!recorded) {
        this.leaseLost(notification);
        return;
      }
      if (durationMs !== null) {
        await this.notifications.insertAttempt(
          tx.manager,
          Object.assign(new NotificationAttempt(), {
            id: newId('nat', recorded.now),
            tenantId: notification.tenantId,
            notificationId: notification.id,
            attempt,
            outcome: outcome.status,
            smtpCode: 'code' in outcome ? outcome.code : outcome.status === 'sent' ? 250 : null,
            response: responseOf(outcome),
            durationMs: Math.max(0, Math.round(durationMs)),
            nextAttemptAt: recorded.nextAttemptAt,
            createdAt: recorded.now,
          }),
        );
      }
      if (result.status === NotificationStatus.Sent || result.status === NotificationStatus.Failed) {
        const row = Object.assign(new Notification(), notification, result, {
          lockedUntil: null,
          nextAttemptAt: null,
          sentAt: result.status === NotificationStatus.Sent ? recorded.now : null,
          updatedAt: recorded.now,
        });
        await this.events.append(tx, {
          tenantId: notification.tenantId,
          type: result.status === NotificationStatus.Sent ? 'notification.sent' : 'notification.failed',
          subjectId: notification.id,
          object: NotificationDto.from(row),
        });
      }
    });
  }

  private leaseLost(notification: Notification): void {
    this.logger.warn({
      msg: 'lease lost before the notification was recorded',
      notification_id: notification.id,
    });
  }
}

function responseOf(outcome: SendOutcome): string {
  return outcome.status === 'refused'
    ? `refused (${outcome.refusal.field}): ${outcome.refusal.reason}`
    : outcome.response;
}

function statusOf(
  prepared: PreparedNotification,
  outcome: SendOutcome | null,
  retryInS: number | null,
): { status: NotificationStatus; reason: string | null } {
  if (prepared.skip !== null || !outcome) {
    return { status: NotificationStatus.Skipped, reason: prepared.skip };
  }
  if (outcome.status === 'sent') {
    return { status: NotificationStatus.Sent, reason: null };
  }
  if (retryInS !== null) {
    return { status: NotificationStatus.Queued, reason: responseOf(outcome) };
  }
  const gaveUp = outcome.status === 'temporary' ? 'every retry failed; the last: ' : '';
  return { status: NotificationStatus.Failed, reason: `${gaveUp}${responseOf(outcome)}` };
}
