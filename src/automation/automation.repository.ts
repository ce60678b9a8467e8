import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { Invoice } from '../billing';
import { AutomationEffect, AutomationRuleSetting } from './automation.entity';
import type { RuleId } from './rules';

/** An event as the consumer reads it. */
export interface LogEvent {
  txId: string;
  id: string;
  tenantId: string;
  type: string;
  subjectId: string | null;
  data: { object: Record<string, unknown>; [key: string]: unknown };
}

const PAYABLE = `('open', 'partially_paid')`;

/** A rule is on for tenant `tenant` unless a setting turns it off. */
const enabled = (tenant: string, rule: string) =>
  `NOT EXISTS (SELECT 1 FROM automation_rule_settings r WHERE r.tenant_id = ${tenant} AND r.rule = '${rule}' AND NOT r.enabled)`;

/**
 * The automation tables (settings, the event consumer's cursor, effects done once), and the reads the rules make of
 * billing's and subscribers' tables (read only: the rules change those through their modules' services).
 */
@Injectable()
export class AutomationRepository {
  settings(manager: EntityManager, tenantId: string): Promise<AutomationRuleSetting[]> {
    return manager.findBy(AutomationRuleSetting, { tenantId });
  }

  /** Sets the rule's switch; answers what it was (a rule without a row is on). */
  async setEnabled(
    manager: EntityManager,
    tenantId: string,
    rule: RuleId,
    on: boolean,
    at: Date,
  ): Promise<boolean> {
    // Concurrent switches of one rule queue on this lock, so each sees the value the one before it left.
    await manager.query(`SELECT pg_advisory_xact_lock(hashtext('automation_rule:' || $1 || '/' || $2))`, [
      tenantId,
      rule,
    ]);
    const previous = await manager.findOneBy(AutomationRuleSetting, { tenantId, rule });
    await manager.query(
      `INSERT INTO automation_rule_settings (tenant_id, rule, enabled, updated_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (tenant_id, rule) DO UPDATE SET enabled = EXCLUDED.enabled, updated_at = EXCLUDED.updated_at`,
      [tenantId, rule, on, at],
    );
    return previous?.enabled ?? true;
  }

  /** The rules turned off, per tenant, for these tenants. */
  async disabled(manager: EntityManager, tenantIds: string[]): Promise<Set<string>> {
    const rows: { tenant_id: string; rule: string }[] = await manager.query(
      `SELECT tenant_id, rule FROM automation_rule_settings WHERE tenant_id = ANY($1::text[]) AND NOT enabled`,
      [tenantIds],
    );
    return new Set(rows.map((row) => `${row.tenant_id}/${row.rule}`));
  }

  /** Records that `rule` did its once-only effect on `subjectId`; false when it had already. */
  async claimEffect(
    manager: EntityManager,
    effect: Pick<AutomationEffect, 'tenantId' | 'rule' | 'subjectId' | 'resultId' | 'createdAt'>,
  ): Promise<boolean> {
    const rows: unknown[] = await manager.query(
      `INSERT INTO automation_effects (tenant_id, rule, subject_id, result_id, created_at) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT DO NOTHING RETURNING 1`,
      [effect.tenantId, effect.rule, effect.subjectId, effect.resultId, effect.createdAt],
    );
    return rows.length === 1;
  }

  /** Locks the consumer's cursor, or answers null when another instance holds it (it is reading). */
  async lockCursor(manager: EntityManager, name: string): Promise<{ txId: string; eventId: string } | null> {
    const rows: { last_tx_id: string; last_event_id: string }[] = await manager.query(
      `SELECT last_tx_id, last_event_id FROM event_consumers WHERE name = $1 FOR UPDATE SKIP LOCKED`,
      [name],
    );
    return rows.length === 0 ? null : { txId: rows[0].last_tx_id, eventId: rows[0].last_event_id };
  }

  async moveCursor(manager: EntityManager, name: string, txId: string, eventId: string): Promise<void> {
    await manager.query(
      `UPDATE event_consumers SET last_tx_id = $2, last_event_id = $3, updated_at = now() WHERE name = $1`,
      [name, txId, eventId],
    );
  }

  /**
   * The next events after the cursor, in (transaction, id) order, from transactions older than every transaction
   * still running: one that commits later has a later id than any read here, so none is passed over.
   */
  async eventsAfter(
    manager: EntityManager,
    txId: string,
    eventId: string,
    limit: number,
  ): Promise<LogEvent[]> {
    const rows: Record<string, unknown>[] = await manager.query(
      `SELECT tx_id, id, tenant_id, type, subject_id, data FROM events
        WHERE tx_id < (pg_snapshot_xmin(pg_current_snapshot()))::text::bigint AND (tx_id, id) > ($1::bigint, $2)
        ORDER BY tx_id, id LIMIT $3`,
      [txId, eventId, limit],
    );
    return rows.map((row) => ({
      txId: String(row.tx_id),
      id: row.id as string,
      tenantId: row.tenant_id as string,
      type: row.type as string,
      subjectId: row.subject_id as string | null,
      data: row.data as LogEvent['data'],
    }));
  }

  /**
   * Whether the log holds a status change of the subscriber after `event` (in the log's order): one still ahead of the
   * consumer, which its own event will act on.
   */
  async statusChangedAfter(manager: EntityManager, event: LogEvent, subscriberId: string): Promise<boolean> {
    const rows: unknown[] = await manager.query(
      `SELECT 1 FROM events
        WHERE tenant_id = $1 AND subject_id = $2 AND type = 'subscriber.status_changed' AND (tx_id, id) > ($3::bigint, $4)
        LIMIT 1`,
      [event.tenantId, subscriberId, event.txId, event.id],
    );
    return rows.length > 0;
  }

  /** Open invoices past their due date (before `today`) not yet announced, of tenants with the rule on; locked. */
  overdueInvoices(manager: EntityManager, today: string, limit: number): Promise<Invoice[]> {
    return manager
      .getRepository(Invoice)
      .createQueryBuilder('i')
      .setLock('pessimistic_write')
      .setOnLocked('skip_locked')
      .where(`i.status IN ${PAYABLE} AND i.dueDate < :today`, { today })
      .andWhere(
        `NOT EXISTS (SELECT 1 FROM automation_effects e WHERE e.tenant_id = i.tenant_id AND e.rule = 'overdue_invoices' AND e.subject_id = i.id)`,
      )
      .andWhere(enabled('i.tenant_id', 'overdue_invoices'))
      .orderBy('i.dueDate')
      .limit(limit)
      .getMany();
  }

  /**
   * Active subscribers with an open invoice past due_date + auto_suspend_after_days of their profile (or the tenant
   * default), of tenants with the rule on.
   */
  async toSuspend(
    manager: EntityManager,
    today: string,
    limit: number,
  ): Promise<{ tenantId: string; id: string }[]> {
    const rows: { tenant_id: string; id: string }[] = await manager.query(
      `SELECT s.tenant_id, s.id FROM subscribers s
         JOIN billing_profiles p ON p.tenant_id = s.tenant_id AND p.id = COALESCE(s.billing_profile_id,
           (SELECT d.id FROM billing_profiles d WHERE d.tenant_id = s.tenant_id AND d.is_default))
        WHERE s.status = 'active' AND p.auto_suspend_after_days IS NOT NULL AND ${enabled('s.tenant_id', 'overdue_invoices')}
          AND EXISTS (SELECT 1 FROM invoices i WHERE i.tenant_id = s.tenant_id AND i.subscriber_id = s.id
                        AND i.status IN ${PAYABLE} AND i.due_date + p.auto_suspend_after_days < $1::date)
        LIMIT $2`,
      [today, limit],
    );
    return rows.map((row) => ({ tenantId: row.tenant_id, id: row.id }));
  }

  /** Whether the subscriber has an invoice still owed past its due date (before `today`). */
  async hasOverdue(
    manager: EntityManager,
    tenantId: string,
    subscriberId: string,
    today: string,
  ): Promise<boolean> {
    const [row]: { overdue: boolean }[] = await manager.query(
      `SELECT EXISTS (SELECT 1 FROM invoices WHERE tenant_id = $1 AND subscriber_id = $2 AND status IN ${PAYABLE}
                        AND due_date < $3::date) AS overdue`,
      [tenantId, subscriberId, today],
    );
    return row.overdue;
  }
}
