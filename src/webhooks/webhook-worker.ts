import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, IsNull } from 'typeorm';
import { newId } from '../common/ids';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { EventRecord } from '../events/event.entity';
import { signatureHeader } from './signing';
import { type SendResult, sendWebhook, USER_AGENT } from './webhook-sender';
import { DeliveryStatus, Webhook, WebhookAttempt, WebhookDelivery } from './webhook.entity';

interface ClaimedRow {
  id: string;
}

function formatDuration(seconds: number): string {
  if (seconds >= 86_400) return `${Math.round(seconds / 86_400)} days`;
  if (seconds >= 3_600) return `${Math.round(seconds / 3_600)} hours`;
  return `${seconds} seconds`;
}

/** ±10 % so retries of many deliveries that failed together do not arrive together. */
const jitter = (seconds: number): number => seconds * (0.9 + Math.random() * 0.2);

/**
 * Delivers the outbox. Each pass claims due deliveries with FOR UPDATE SKIP LOCKED and a lease, so several instances
 * share the work without sending anything twice, and a delivery whose worker died is taken up once its lease ends.
 * A pass runs on every poll tick and right after a commit that queued deliveries (wake).
 */
@Injectable()
export class WebhookWorker implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('WebhookWorker');
  private timer?: NodeJS.Timeout;
  private running = false;
  private stopped = false;
  private rerun = false;
  private current: Promise<void> = Promise.resolve();

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.config.webhooks.workerEnabled) return;
    this.timer = setInterval(() => this.wake(), this.config.webhooks.pollMs);
    this.timer.unref();
    this.wake();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.current;
  }

  /** Starts a pass now, or right after the one under way. */
  wake(): void {
    if (this.stopped || !this.config.webhooks.workerEnabled) return;
    if (this.running) {
      this.rerun = true;
      return;
    }
    this.running = true;
    this.current = this.drain()
      .catch((error: Error) => this.logger.error({ msg: 'webhook pass failed', err: error.message }))
      .finally(() => {
        this.running = false;
        if (this.rerun && !this.stopped) {
          this.rerun = false;
          this.wake();
        }
      });
  }

  private async drain(): Promise<void> {
    const batch = this.config.webhooks.concurrency;
    for (;;) {
      if (this.stopped) return;
      const claimed = await this.claim(batch);
      await Promise.all(claimed.map((row) => this.deliver(row.id)));
      if (claimed.length < batch) return;
    }
  }

  private async claim(limit: number): Promise<ClaimedRow[]> {
    const now = new Date();
    // The lease outlives the send timeout, so only a dead worker's deliveries are ever taken over.
    const leaseUntil = new Date(now.getTime() + this.config.webhooks.timeoutMs + 5_000);
    // TypeORM answers an UPDATE … RETURNING with [rows, affected].
    const [rows] = await this.dataSource.query<[ClaimedRow[], number]>(
      `UPDATE webhook_deliveries d SET locked_until = $2
       FROM (SELECT d2.id FROM webhook_deliveries d2 JOIN webhooks w ON w.id = d2.webhook_id
             WHERE d2.status = 'pending' AND d2.next_attempt_at <= $1
               AND (d2.locked_until IS NULL OR d2.locked_until < $1) AND w.enabled
             ORDER BY d2.next_attempt_at LIMIT $3
             FOR UPDATE OF d2 SKIP LOCKED) due
       WHERE d.id = due.id
       RETURNING d.id`,
      [now, leaseUntil, limit],
    );
    return rows;
  }

  private async deliver(deliveryId: string): Promise<void> {
    const delivery = await this.dataSource.getRepository(WebhookDelivery).findOneBy({ id: deliveryId });
    const webhook =
      delivery && (await this.dataSource.getRepository(Webhook).findOneBy({ id: delivery.webhookId }));
    const event =
      delivery && (await this.dataSource.getRepository(EventRecord).findOneBy({ id: delivery.eventId }));
    if (!delivery || !webhook || !event) return;

    const body = JSON.stringify({
      id: event.id,
      type: event.type,
      created_at: event.createdAt.toISOString(),
      data: event.data,
    });
    const timestamp = Math.floor(Date.now() / 1000);
    const secrets = [webhook.secret];
    if (
      webhook.previousSecret &&
      webhook.previousSecretExpiresAt &&
      webhook.previousSecretExpiresAt > new Date()
    ) {
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
      { timeoutMs: this.config.webhooks.timeoutMs, allowPrivate: this.config.webhooks.allowPrivate },
    );
    await this.record(delivery, webhook, result);
  }

  /** Logs the attempt and decides what follows: done, a retry, or giving up (and perhaps disabling the endpoint). */
  private async record(delivery: WebhookDelivery, webhook: Webhook, result: SendResult): Promise<void> {
    const now = new Date();
    const attempt = delivery.attempts + 1;
    const delivered = result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
    const gone = result.statusCode === 410;
    const delays = this.config.webhooks.retryDelaysS;
    const exhausted = attempt > delays.length;
    let nextAttemptAt: Date | null = null;
    if (!delivered && !gone && !exhausted) {
      const honoured = result.statusCode === 429 || result.statusCode === 503 ? result.retryAfterS : null;
      const seconds = honoured !== null ? Math.min(honoured, 86_400) : jitter(delays[attempt - 1]);
      nextAttemptAt = new Date(now.getTime() + seconds * 1000);
    }
    const status = delivered
      ? DeliveryStatus.Succeeded
      : nextAttemptAt
        ? DeliveryStatus.Pending
        : DeliveryStatus.Failed;
    const error = delivered ? null : (result.error ?? `endpoint answered ${result.statusCode}`);

    await this.dataSource.transaction(async (manager) => {
      // Only while our lease holds: if it ran out and another worker took the delivery, that worker records it.
      const updated = await manager.update(
        WebhookDelivery,
        { id: delivery.id, lockedUntil: delivery.lockedUntil ?? IsNull() },
        { attempts: attempt, status, nextAttemptAt, lockedUntil: null, updatedAt: now },
      );
      if (updated.affected === 0) {
        this.logger.warn({ msg: 'lease lost before the attempt was recorded', delivery_id: delivery.id });
        return;
      }
      await manager.insert(WebhookAttempt, {
        id: newId('att'),
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
        nextAttemptAt,
        createdAt: now,
      });
      if (delivered) {
        if (webhook.failingSince) await manager.update(Webhook, { id: webhook.id }, { failingSince: null });
        return;
      }
      const failingSince = webhook.failingSince ?? now;
      const failingTooLong =
        now.getTime() - failingSince.getTime() >= this.config.webhooks.disableAfterS * 1000;
      const disabledReason = gone
        ? 'the endpoint answered 410 Gone'
        : failingTooLong
          ? `every attempt failed for ${formatDuration(this.config.webhooks.disableAfterS)}`
          : null;
      await manager.update(
        Webhook,
        { id: webhook.id },
        disabledReason ? { failingSince, enabled: false, disabledReason, updatedAt: now } : { failingSince },
      );
    });
  }
}
