import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { PolledWorker } from '../common/polled-worker';
import { DataSource } from 'typeorm';
import { Clock } from '../common/clock';
import { newId } from '../common/ids';
import { SYSTEM_SCOPE } from '../common/request-context';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { TransactionRunner } from '../database/transaction-runner';
import { EventsService } from '../events';
import { signatureHeader } from './signing';
import { type SendResult, sendWebhook, USER_AGENT } from './webhook-sender';
import { WebhookDeliveriesRepository } from './webhook-deliveries.repository';
import { DeliveryStatus, Webhook, WebhookAttempt, WebhookDelivery } from './webhook.entity';
import { WebhooksRepository } from './webhooks.repository';

export function formatDuration(seconds: number): string {
  if (seconds >= 86_400) {
    return `${Math.round(seconds / 86_400)} days`;
  }
  if (seconds >= 3_600) {
    return `${Math.round(seconds / 3_600)} hours`;
  }
  return `${seconds} seconds`;
}

/** ±10 % so retries of many deliveries that failed together do not arrive together. */
const jitter = (seconds: number): number => seconds * (0.9 + Math.random() * 0.2);

/**
 * When attempt number `attempt` (1 for the first) is tried again, in seconds, or null when it is not: delivered (2xx),
 * gone (410), or the retries (`delays`, one per retry) used up. A 429 or 503 with a Retry-After is honoured, up to a
 * day; otherwise the attempt's delay, jittered.
 */
export function retryInSeconds(
  attempt: number,
  result: SendResult,
  delays: readonly number[],
): number | null {
  const delivered = result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
  if (delivered || result.statusCode === 410 || attempt > delays.length) {
    return null;
  }
  const honoured = result.statusCode === 429 || result.statusCode === 503 ? result.retryAfterS : null;
  return honoured !== null ? Math.min(honoured, 86_400) : jitter(delays[attempt - 1]);
}

/**
 * Delivers the outbox. Each pass claims due deliveries with FOR UPDATE SKIP LOCKED and a lease, so several instances
 * share the work without sending anything twice, and a delivery whose worker died is taken up once its lease ends.
 * A pass runs on every poll tick and right after a commit that queued deliveries (wake).
 */
@Injectable()
export class WebhookWorker extends PolledWorker {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly transactionRunner: TransactionRunner,
    private readonly events: EventsService,
    private readonly webhooks: WebhooksRepository,
    private readonly deliveries: WebhookDeliveriesRepository,
    private readonly clock: Clock,
  ) {
    super('WebhookWorker', 'webhook pass failed');
  }

  protected pollMs(): number | null {
    return this.config.webhooks.workerEnabled ? this.config.webhooks.pollMs : null;
  }

  protected async pass(): Promise<void> {
    const batch = this.config.webhooks.concurrency;
    for (;;) {
      if (this.loop.stopped) {
        return;
      }
      const claimed = await this.claim(batch);
      await Promise.all(claimed.map((id) => this.deliver(id)));
      if (claimed.length < batch) {
        return;
      }
    }
  }

  private claim(limit: number): Promise<string[]> {
    // The lease outlives the send timeout, so only a dead worker's deliveries are ever taken over.
    const leaseMs = this.config.webhooks.timeoutMs + 5_000;
    return this.deliveries.claim(this.dataSource.manager, leaseMs, limit);
  }

  private async deliver(deliveryId: string): Promise<void> {
    const { manager } = this.dataSource;
    const delivery = await this.deliveries.findClaimed(manager, deliveryId);
    const webhook = delivery && (await this.webhooks.findForDelivery(manager, delivery.webhookId));
    const event = delivery && (await this.events.find(delivery.tenantId, delivery.eventId));
    if (!delivery || !webhook || !event) {
      return;
    }

    const body = JSON.stringify({
      id: event.id,
      type: event.type,
      created_at: event.createdAt.toISOString(),
      data: event.data,
    });
    const now = this.clock.now();
    const timestamp = Math.floor(now.getTime() / 1000);
    const secrets = [webhook.secret];
    if (webhook.previousSecret && webhook.previousSecretExpiresAt && webhook.previousSecretExpiresAt > now) {
      secrets.push(webhook.previousSecret);
    }
    const result = await sendWebhook(
      webhook.url,
      {
        'Content-Type': 'application/json',
        'User-Agent': USER_AGENT,
        'webhook-id': event.id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signatureHeader(secrets, event.id, timestamp, body),
      },
      body,
      {
        timeoutMs: this.config.webhooks.timeoutMs,
        allowPrivate: this.config.webhooks.allowPrivate,
        clock: this.clock,
      },
    );
    await this.record(delivery, webhook, result);
  }

  /** Logs the attempt and decides what follows: done, a retry, or giving up (and perhaps disabling the endpoint). */
  private async record(delivery: WebhookDelivery, webhook: Webhook, result: SendResult): Promise<void> {
    const attempt = delivery.attempts + 1;
    const delivered = result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
    const gone = result.statusCode === 410;
    const retryInS = retryInSeconds(attempt, result, this.config.webhooks.retryDelaysS);
    const error = delivered ? null : (result.error ?? `endpoint answered ${result.statusCode}`);

    await this.transactionRunner.run(SYSTEM_SCOPE, async ({ manager }) => {
      // The subscription's row lock orders this against a PATCH that disables it (which cancels what is pending).
      const enabled = await this.webhooks.lockEnabled(manager, webhook.id);
      const status = delivered
        ? DeliveryStatus.Succeeded
        : retryInS === null
          ? DeliveryStatus.Failed
          : enabled
            ? DeliveryStatus.Pending
            : DeliveryStatus.Cancelled;
      // Only while our lease holds: if it ran out and another worker took the delivery, that worker records it.
      // Times are the database's (now()), like the claim's, so instances with skewed clocks agree.
      const recorded = await this.deliveries.recordOutcome(manager, delivery, attempt, status, retryInS ?? 0);
      if (!recorded) {
        this.logger.warn({ msg: 'lease lost before the attempt was recorded', delivery_id: delivery.id });
        return;
      }
      await this.deliveries.insertAttempt(
        manager,
        Object.assign(new WebhookAttempt(), {
          id: newId('att', recorded.now),
          tenantId: delivery.tenantId,
          webhookId: webhook.id,
          deliveryId: delivery.id,
          eventId: delivery.eventId,
          eventType: delivery.eventType,
          attempt,
          statusCode: result.statusCode,
          durationMs: result.durationMs,
          error,
          responseBody: result.body,
          nextAttemptAt: recorded.nextAttemptAt,
          createdAt: recorded.now,
        }),
      );
      if (delivered) {
        await this.webhooks.clearFailing(manager, webhook.id);
        return;
      }
      const disableAfterS = this.config.webhooks.disableAfterS;
      const tooLong = await this.webhooks.markFailing(manager, webhook.id, disableAfterS);
      const disabledReason = gone
        ? 'the endpoint answered 410 Gone'
        : tooLong
          ? `every attempt failed for ${formatDuration(disableAfterS)}`
          : null;
      if (disabledReason && enabled) {
        await this.webhooks.disable(manager, webhook.id, disabledReason);
        await this.deliveries.cancelPending(manager, delivery.tenantId, webhook.id);
      }
    });
  }
}
