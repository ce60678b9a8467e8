import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { newId } from '../common/ids';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { EventRecord } from '../events/event.entity';
import { cancelPendingDeliveries } from './delivery-cancellation';
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

/**
 * Takes up to $2 due deliveries and leases them for $1 ms, by the database's clock (now()), so instances whose clocks
 * disagree still agree on what is due and whose lease holds. It walks the partial index of pending deliveries in due
 * order; one whose subscription is disabled (queued by an event that raced the PATCH disabling it) is cancelled here
 * instead of leased, so nothing stranded stays in that index.
 */
export const CLAIM_SQL = `WITH due AS (
    SELECT d.id, w.enabled FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
    WHERE d.status = 'pending' AND d.next_attempt_at <= now() AND (d.locked_until IS NULL OR d.locked_until < now())
    ORDER BY d.next_attempt_at LIMIT $2::int
    FOR UPDATE OF d SKIP LOCKED)
  UPDATE webhook_deliveries d
  SET locked_until = CASE WHEN due.enabled THEN now() + $1::float8 * interval '1 millisecond' END,
      status = CASE WHEN due.enabled THEN d.status ELSE 'cancelled' END,
      next_attempt_at = CASE WHEN due.enabled THEN d.next_attempt_at END,
      updated_at = CASE WHEN due.enabled THEN d.updated_at ELSE now() END
  FROM due WHERE d.id = due.id
  RETURNING d.id, due.enabled`;

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
    // The lease outlives the send timeout, so only a dead worker's deliveries are ever taken over.
    const leaseMs = this.config.webhooks.timeoutMs + 5_000;
    // TypeORM answers an UPDATE … RETURNING with [rows, affected].
    const [rows] = await this.dataSource.query<[(ClaimedRow & { enabled: boolean })[], number]>(CLAIM_SQL, [
      leaseMs,
      limit,
    ]);
    return rows.filter((row) => row.enabled);
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
    const attempt = delivery.attempts + 1;
    const delivered = result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
    const gone = result.statusCode === 410;
    const delays = this.config.webhooks.retryDelaysS;
    let retryInS: number | null = null;
    if (!delivered && !gone && attempt <= delays.length) {
      const honoured = result.statusCode === 429 || result.statusCode === 503 ? result.retryAfterS : null;
      retryInS = honoured !== null ? Math.min(honoured, 86_400) : jitter(delays[attempt - 1]);
    }
    const error = delivered ? null : (result.error ?? `endpoint answered ${result.statusCode}`);

    await this.dataSource.transaction(async (manager) => {
      // The subscription's row lock orders this against a PATCH that disables it (which cancels what is pending).
      const [current] = await manager.query<{ enabled: boolean }[]>(
        'SELECT enabled FROM webhooks WHERE id = $1 FOR NO KEY UPDATE',
        [webhook.id],
      );
      const status = delivered
        ? DeliveryStatus.Succeeded
        : retryInS === null
          ? DeliveryStatus.Failed
          : current?.enabled
            ? DeliveryStatus.Pending
            : DeliveryStatus.Cancelled;
      // Only while our lease holds: if it ran out and another worker took the delivery, that worker records it.
      // Times are the database's (now()), like the claim's, so instances with skewed clocks agree.
      const [updated] = await manager.query<[{ next_attempt_at: Date | null; now: Date }[], number]>(
        `UPDATE webhook_deliveries SET attempts = $2, status = $3::text, locked_until = NULL, updated_at = now(),
           next_attempt_at = CASE WHEN $3::text = 'pending' THEN now() + $4::float8 * interval '1 second' END
         WHERE id = $1 AND locked_until IS NOT DISTINCT FROM $5
         RETURNING next_attempt_at, now() AS now`,
        [delivery.id, attempt, status, retryInS ?? 0, delivery.lockedUntil],
      );
      if (updated.length === 0) {
        this.logger.warn({ msg: 'lease lost before the attempt was recorded', delivery_id: delivery.id });
        return;
      }
      const { next_attempt_at: nextAttemptAt, now } = updated[0];
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
        await manager.query(
          'UPDATE webhooks SET failing_since = NULL WHERE id = $1 AND failing_since IS NOT NULL',
          [webhook.id],
        );
        return;
      }
      const [failing] = await manager.query<[{ too_long: boolean }[], number]>(
        `UPDATE webhooks SET failing_since = COALESCE(failing_since, now()) WHERE id = $1
         RETURNING failing_since <= now() - $2::float8 * interval '1 second' AS too_long`,
        [webhook.id, this.config.webhooks.disableAfterS],
      );
      const disabledReason = gone
        ? 'the endpoint answered 410 Gone'
        : failing[0]?.too_long
          ? `every attempt failed for ${formatDuration(this.config.webhooks.disableAfterS)}`
          : null;
      if (disabledReason && current?.enabled) {
        await manager.query(
          'UPDATE webhooks SET enabled = false, disabled_reason = $2, updated_at = now() WHERE id = $1',
          [webhook.id, disabledReason],
        );
        await cancelPendingDeliveries(manager, delivery.tenantId, webhook.id);
      }
    });
  }
}
