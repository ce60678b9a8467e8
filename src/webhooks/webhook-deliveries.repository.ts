import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { Page } from '../common/envelope/envelope';
import { ApiError } from '../common/errors/api-error';
import { paginate, type PageQueryDto } from '../common/pagination';
import { entityColumns } from '../database/entity-columns';
import type { SqlParams } from '../database/sql-params';
import { type EventPlaceholders, type EventRecord, type OutboxFanOut, patternsFor } from '../events';
import { DeliveryStatus, WebhookAttempt, WebhookDelivery } from './webhook.entity';

const DELIVERY_COLUMNS = entityColumns(WebhookDelivery);

/**
 * The outbox fan-out webhooks supplies to every event's statement (EventsService.useFanOut): one pending delivery per
 * enabled subscription whose patterns match the event's type. Its one parameter is those patterns (patternsFor). A
 * delivery is due at the database's now(), the clock every claim and lease uses, not at this instance's.
 */
export const DELIVERIES_FAN_OUT: OutboxFanOut = {
  tag: '',
  appliesTo: () => true,
  ctes(event: EventPlaceholders, record: EventRecord, params: SqlParams) {
    // Typed by the entity: a column added to it must be given its value here.
    const values: Record<keyof WebhookDelivery, string> = {
      tenantId: event.tenantId,
      id: `isp_new_id('dlv', ${event.createdAt})`,
      webhookId: 'webhook.id',
      eventId: event.id,
      eventType: event.type,
      status: `'${DeliveryStatus.Pending}'`,
      attempts: '0',
      nextAttemptAt: 'now()',
      lockedUntil: 'NULL',
      createdAt: event.createdAt,
      updatedAt: event.createdAt,
    };
    const sql =
      `deliveries AS (INSERT INTO webhook_deliveries (${DELIVERY_COLUMNS.map((c) => c.column).join(', ')}) ` +
      `SELECT ${DELIVERY_COLUMNS.map((c) => values[c.property]).join(', ')} ` +
      `FROM webhooks webhook WHERE webhook.tenant_id = ${event.tenantId} AND webhook.enabled ` +
      `AND webhook.events && ${params.add(patternsFor(record.type), 'text[]')} RETURNING 1)`;
    return { sql, count: '(SELECT count(*)::int FROM deliveries)' };
  },
  rowsCtes(source: string) {
    const values: Record<keyof WebhookDelivery, string> = {
      tenantId: 'e.tenant_id',
      id: `isp_new_id('dlv', e.created_at)`,
      webhookId: 'webhook.id',
      eventId: 'e.id',
      eventType: 'e.type',
      status: `'${DeliveryStatus.Pending}'`,
      attempts: '0',
      nextAttemptAt: 'now()',
      lockedUntil: 'NULL',
      createdAt: 'e.created_at',
      updatedAt: 'e.created_at',
    };
    const sql =
      `deliveries AS (INSERT INTO webhook_deliveries (${DELIVERY_COLUMNS.map((c) => c.column).join(', ')}) ` +
      `SELECT ${DELIVERY_COLUMNS.map((c) => values[c.property]).join(', ')} ` +
      `FROM ${source} e JOIN webhooks webhook ON webhook.tenant_id = e.tenant_id AND webhook.enabled ` +
      `AND webhook.events && e.patterns RETURNING 1)`;
    return { sql, count: '(SELECT count(*)::int FROM deliveries)' };
  },
};

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

/** What recording an attempt left on the delivery, by the database's clock. */
export interface RecordedAttempt {
  nextAttemptAt: Date | null;
  now: Date;
}

/** The outbox rows (webhook_deliveries) and the log of their attempts (webhook_attempts). */
@Injectable()
export class WebhookDeliveriesRepository {
  /** A new pending delivery, due at the database's now() (the clock the worker's claim reads). */
  async insert(manager: EntityManager, delivery: WebhookDelivery): Promise<void> {
    await manager.insert(WebhookDelivery, { ...delivery, nextAttemptAt: () => 'now()' });
  }

  /** The tenant's delivery; 404 not_found when there is none. */
  async getById(manager: EntityManager, tenantId: string, id: string): Promise<WebhookDelivery> {
    const delivery = await manager.findOneBy(WebhookDelivery, { tenantId, id });
    if (!delivery) {
      throw ApiError.notFound('webhook delivery', id);
    }
    return delivery;
  }

  /** A delivery the worker claimed, or null (its subscription was deleted meanwhile). */
  findClaimed(manager: EntityManager, id: string): Promise<WebhookDelivery | null> {
    return manager.findOneBy(WebhookDelivery, { id });
  }

  /** Leases up to `limit` due deliveries for `leaseMs` (CLAIM_SQL); answers the ids of those leased. */
  async claim(manager: EntityManager, leaseMs: number, limit: number): Promise<string[]> {
    // TypeORM answers an UPDATE … RETURNING with [rows, affected].
    const [rows] = await manager.query<[{ id: string; enabled: boolean }[], number]>(CLAIM_SQL, [
      leaseMs,
      limit,
    ]);
    return rows.filter((row) => row.enabled).map((row) => row.id);
  }

  /**
   * Records an attempt's outcome on the delivery, only while the worker's lease holds (`lockedUntil` is the one it
   * was claimed with): a `pending` one is due again `retryInS` seconds after the database's now(). Null when the
   * lease was lost and another worker took the delivery.
   */
  async recordOutcome(
    manager: EntityManager,
    delivery: WebhookDelivery,
    attempt: number,
    status: DeliveryStatus,
    retryInS: number,
  ): Promise<RecordedAttempt | null> {
    const [updated] = await manager.query<[{ next_attempt_at: Date | null; now: Date }[], number]>(
      `UPDATE webhook_deliveries SET attempts = $2, status = $3::text, locked_until = NULL, updated_at = now(),
         next_attempt_at = CASE WHEN $3::text = 'pending' THEN now() + $4::float8 * interval '1 second' END
       WHERE id = $1 AND locked_until IS NOT DISTINCT FROM $5
       RETURNING next_attempt_at, now() AS now`,
      [delivery.id, attempt, status, retryInS, delivery.lockedUntil],
    );
    return updated.length === 0 ? null : { nextAttemptAt: updated[0].next_attempt_at, now: updated[0].now };
  }

  async insertAttempt(manager: EntityManager, attempt: WebhookAttempt): Promise<void> {
    await manager.insert(WebhookAttempt, attempt);
  }

  /**
   * Ends the pending deliveries of a subscription just disabled (by request, a 410, or failing too long): they become
   * `cancelled` and leave the claim index, so a disabled endpoint costs the worker nothing. A delivery a worker holds
   * right now is left to that worker, which records it as cancelled once it sees the subscription disabled.
   * Re-enabling does not bring them back; a redelivery sends one again (WebhooksService.redeliver).
   */
  async cancelPending(manager: EntityManager, tenantId: string, webhookId: string): Promise<void> {
    await manager.query(
      `UPDATE webhook_deliveries SET status = 'cancelled', next_attempt_at = NULL, updated_at = now()
       WHERE tenant_id = $1 AND webhook_id = $2 AND status = 'pending'
         AND (locked_until IS NULL OR locked_until < now())`,
      [tenantId, webhookId],
    );
  }

  /** Everything a subscription queued and logged, before the subscription itself is deleted. */
  async deleteForWebhook(manager: EntityManager, tenantId: string, webhookId: string): Promise<void> {
    // Attempts first: each references its delivery (foreign keys).
    await manager.delete(WebhookAttempt, { tenantId, webhookId });
    await manager.delete(WebhookDelivery, { tenantId, webhookId });
  }

  /** A subscription's deliveries, newest first, with their status (`cancelled` ones included). */
  page(
    manager: EntityManager,
    tenantId: string,
    filter: { webhookId: string; statuses?: DeliveryStatus[] },
    query: PageQueryDto,
  ): Promise<Page<WebhookDelivery>> {
    const qb = manager
      .getRepository(WebhookDelivery)
      .createQueryBuilder('delivery')
      .where('delivery.tenantId = :tenantId AND delivery.webhookId = :webhookId', {
        tenantId,
        webhookId: filter.webhookId,
      });
    if (filter.statuses) {
      qb.andWhere('delivery.status IN (:...statuses)', { statuses: filter.statuses });
    }
    return paginate(qb, query);
  }

  /** A subscription's attempts, newest first. */
  attemptsPage(
    manager: EntityManager,
    tenantId: string,
    webhookId: string,
    query: PageQueryDto,
  ): Promise<Page<WebhookAttempt>> {
    const qb = manager
      .getRepository(WebhookAttempt)
      .createQueryBuilder('attempt')
      .where('attempt.tenantId = :tenantId AND attempt.webhookId = :webhookId', { tenantId, webhookId });
    return paginate(qb, query);
  }

  /** Deletes every row of the tenant in webhook_attempts, webhook_deliveries, in that order: its test clock is deleted (docs/test-clocks.md). */
  async purgeTenant(manager: EntityManager, tenantId: string): Promise<void> {
    for (const table of ['webhook_attempts', 'webhook_deliveries']) {
      await manager.query(`DELETE FROM ${table} WHERE tenant_id = $1`, [tenantId]);
    }
  }
}
