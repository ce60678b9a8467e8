import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import type { Page } from '../common/envelope/envelope';
import { ApiError } from '../common/errors/api-error';
import { paginate, type PageQueryDto } from '../common/pagination';
import { entityColumns, entityFromRow } from '../database/entity-columns';
import type { SqlParams } from '../database/sql-params';
import type { EventPlaceholders, EventRecord, OutboxFanOut } from '../events';
import { Notification, NotificationAttempt, NotificationStatus } from './notification.entity';
import { notificationFor } from './outbox/notification-trigger';

const NOTIFICATION_COLUMNS = entityColumns(Notification);

/** The columns of a new notification, as SQL: the event's tenant, id, type and time, and the cause's kind and subscriber. */
function newNotification(event: {
  tenantId: string;
  id: string;
  type: string;
  createdAt: string;
  kind: string;
  subscriberId: string;
}): Record<keyof Notification, string> {
  return {
    tenantId: event.tenantId,
    id: `isp_new_id('ntf', ${event.createdAt})`,
    kind: event.kind,
    subscriberId: event.subscriberId,
    eventId: event.id,
    eventType: event.type,
    status: `'${NotificationStatus.Queued}'`,
    reason: 'NULL',
    recipient: 'NULL',
    subject: 'NULL',
    messageId: 'NULL',
    attempts: '0',
    nextAttemptAt: 'now()',
    lockedUntil: 'NULL',
    sentAt: 'NULL',
    sendStartedAt: 'NULL',
    createdAt: event.createdAt,
    updatedAt: event.createdAt,
  };
}

const INSERT = `INSERT INTO notifications (${NOTIFICATION_COLUMNS.map((c) => c.column).join(', ')})`;

function select(values: Record<keyof Notification, string>): string {
  return `SELECT ${NOTIFICATION_COLUMNS.map((c) => values[c.property]).join(', ')}`;
}

/**
 * The outbox fan-out notifications supplies to the events it applies to (notificationFor decides, from the event
 * alone): one queued notification, in the event's own statement, so it commits with its cause or not at all. Due at
 * the database's now(), the clock the worker's claim reads.
 */
export const NOTIFICATIONS_FAN_OUT: OutboxFanOut = {
  tag: 'ntf',
  appliesTo: (record: EventRecord) => notificationFor(record) !== null,
  ctes(event: EventPlaceholders, record: EventRecord, params: SqlParams) {
    const cause = notificationFor(record);
    const values = newNotification({
      ...event,
      kind: `${params.add(cause?.kind ?? null)}::text`,
      subscriberId: `${params.add(cause?.subscriberId ?? null)}::text`,
    });
    return {
      sql: `notified AS (${INSERT} ${select(values)} RETURNING 1)`,
      count: '(SELECT count(*)::int FROM notified)',
    };
  },
  rowsCtes(source: string) {
    const values = newNotification({
      tenantId: 'e.tenant_id',
      id: 'e.id',
      type: 'e.type',
      createdAt: 'e.created_at',
      kind: 'e.notification_kind',
      subscriberId: 'e.notification_subscriber_id',
    });
    return {
      sql: `notified AS (${INSERT} ${select(values)} FROM ${source} e WHERE e.notification_kind IS NOT NULL RETURNING 1)`,
      count: '(SELECT count(*)::int FROM notified)',
    };
  },
  rowColumns: {
    notification_kind: (record) => notificationFor(record)?.kind ?? null,
    notification_subscriber_id: (record) => notificationFor(record)?.subscriberId ?? null,
  },
};

/**
 * Takes up to $2 due notifications and leases them for $1 ms, by the database's clock (now()), so instances whose
 * clocks disagree agree on what is due and whose lease holds; SKIP LOCKED lets several instances claim at once.
 * Answers the claimed rows whole (their lease included), so the worker reads none of them again.
 */
const CLAIM_SQL = `WITH due AS (
    SELECT n.id FROM notifications n
    WHERE n.status = 'queued' AND n.next_attempt_at <= now() AND (n.locked_until IS NULL OR n.locked_until < now())
    ORDER BY n.next_attempt_at LIMIT $2::int
    FOR UPDATE OF n SKIP LOCKED)
  UPDATE notifications n SET locked_until = now() + $1::float8 * interval '1 millisecond'
  FROM due WHERE n.id = due.id
  RETURNING ${NOTIFICATION_COLUMNS.map((column) => `n.${column.column}`).join(', ')}`;

/** What the worker writes on a notification when it is done with it, or puts it back in the queue. */
export interface NotificationOutcome {
  status: NotificationStatus;
  reason: string | null;
  subscriberId: string | null;
  recipient: string | null;
  subject: string | null;
  messageId: string | null;
  attempts: number;
  /** Queued again: due this many seconds after the database's now(). */
  retryInS: number | null;
}

/** The filters of GET /notifications. */
export interface NotificationFilter {
  subscriberId?: string;
  kinds?: string[];
  statuses?: string[];
}

/** The notifications (the outbox rows of mail) and their attempts. */
@Injectable()
export class NotificationsRepository {
  /** Leases up to `limit` due notifications for `leaseMs`; answers them as leased. */
  async claim(manager: EntityManager, leaseMs: number, limit: number): Promise<Notification[]> {
    const [rows] = await manager.query<[Record<string, unknown>[], number]>(CLAIM_SQL, [leaseMs, limit]);
    return rows.map((row) => entityFromRow(Notification, row));
  }

  /**
   * Writes the outcome, only while the worker's lease holds (`lockedUntil` is the one it claimed with); answers the
   * database's now() and when it is due again, or null when the lease was lost and another worker took it.
   */
  async finish(
    manager: EntityManager,
    notification: Notification,
    outcome: NotificationOutcome,
  ): Promise<{ now: Date; nextAttemptAt: Date | null } | null> {
    const [rows] = await manager.query<[{ now: Date; next_attempt_at: Date | null }[], number]>(
      `UPDATE notifications SET status = $2::text, reason = $3, subscriber_id = $4, recipient = $5, subject = $6,
         message_id = $7, attempts = $8, locked_until = NULL, updated_at = now(),
         next_attempt_at = CASE WHEN $2::text = 'queued' THEN now() + $9::float8 * interval '1 second' END,
         sent_at = CASE WHEN $2::text = 'sent' THEN now() END
       WHERE id = $1 AND locked_until IS NOT DISTINCT FROM $10
       RETURNING now() AS now, next_attempt_at`,
      [
        notification.id,
        outcome.status,
        outcome.reason,
        outcome.subscriberId,
        outcome.recipient,
        outcome.subject,
        outcome.messageId,
        outcome.attempts,
        outcome.retryInS ?? 0,
        notification.lockedUntil,
      ],
    );
    return rows.length === 0 ? null : { now: rows[0].now, nextAttemptAt: rows[0].next_attempt_at };
  }

  /** Gives the lease back without an attempt: due again `inS` seconds from now (the tenant's send rate is spent). */
  async postpone(manager: EntityManager, notification: Notification, inS: number): Promise<void> {
    await manager.query(
      `UPDATE notifications SET locked_until = NULL, next_attempt_at = now() + $2::float8 * interval '1 second',
         updated_at = now()
       WHERE id = $1 AND locked_until IS NOT DISTINCT FROM $3`,
      [notification.id, inS, notification.lockedUntil],
    );
  }

  /**
   * Takes one of the tenant's sends of the minute for this notification, in the caller's transaction: under a lock
   * per tenant, so instances and a worker's parallel sends count one after the other, the notification is stamped
   * send_started_at only while fewer than `ratePerMinute` of the tenant's sends started in the last minute (and only
   * while the worker's lease holds). Answers whether it may be sent now.
   */
  async reserveSend(
    manager: EntityManager,
    notification: Notification,
    ratePerMinute: number,
  ): Promise<boolean> {
    await manager.query(`SELECT pg_advisory_xact_lock(hashtext('notification_rate:' || $1))`, [
      notification.tenantId,
    ]);
    const [rows] = await manager.query<[unknown[], number]>(
      `UPDATE notifications SET send_started_at = now()
        WHERE id = $1 AND locked_until IS NOT DISTINCT FROM $2
          AND (SELECT count(*) FROM notifications
                WHERE tenant_id = $3 AND send_started_at > now() - interval '1 minute') < $4
        RETURNING 1`,
      [notification.id, notification.lockedUntil, notification.tenantId, ratePerMinute],
    );
    return rows.length > 0;
  }

  async insertAttempt(manager: EntityManager, attempt: NotificationAttempt): Promise<void> {
    await manager.insert(NotificationAttempt, attempt);
  }

  async getById(manager: EntityManager, tenantId: string, id: string): Promise<Notification> {
    const notification = await manager.findOneBy(Notification, { tenantId, id });
    if (!notification) {
      throw ApiError.notFound('notification', id);
    }
    return notification;
  }

  /** The tenant's notifications, newest first. */
  page(
    manager: EntityManager,
    tenantId: string,
    filter: NotificationFilter,
    query: PageQueryDto,
  ): Promise<Page<Notification>> {
    const qb = manager
      .getRepository(Notification)
      .createQueryBuilder('notification')
      .where('notification.tenantId = :tenantId', { tenantId });
    if (filter.subscriberId) {
      qb.andWhere('notification.subscriberId = :subscriberId', { subscriberId: filter.subscriberId });
    }
    if (filter.kinds) {
      qb.andWhere('notification.kind IN (:...kinds)', { kinds: filter.kinds });
    }
    if (filter.statuses) {
      qb.andWhere('notification.status IN (:...statuses)', { statuses: filter.statuses });
    }
    return paginate(qb, query);
  }

  /** The attempts of these notifications, oldest first. */
  attempts(manager: EntityManager, tenantId: string, ids: readonly string[]): Promise<NotificationAttempt[]> {
    if (ids.length === 0) {
      return Promise.resolve([]);
    }
    return manager
      .getRepository(NotificationAttempt)
      .createQueryBuilder('attempt')
      .where('attempt.tenantId = :tenantId AND attempt.notificationId IN (:...ids)', { tenantId, ids })
      .orderBy('attempt.notificationId')
      .addOrderBy('attempt.attempt')
      .getMany();
  }

  /** Deletes every row of the tenant in notification_attempts, notifications, in that order: its test clock is deleted (docs/test-clocks.md). */
  async purgeTenant(manager: EntityManager, tenantId: string): Promise<void> {
    for (const table of ['notification_attempts', 'notifications']) {
      await manager.query(`DELETE FROM ${table} WHERE tenant_id = $1`, [tenantId]);
    }
  }
}
