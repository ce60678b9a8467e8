import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import type { SubjectFilter } from '../billing';
import { AutomationEffect, AutomationRuleSetting } from './automation.entity';
import type { RuleId } from './rules';

/** A rule is on for tenant `tenant` unless a setting turns it off. */
const enabled = (tenant: string, rule: string) =>
  `NOT EXISTS (SELECT 1 FROM automation_rule_settings r WHERE r.tenant_id = ${tenant} AND r.rule = '${rule}' AND NOT r.enabled)`;

/**
 * The automation tables (settings, the event consumer's cursor, effects done once). The rules read billing through
 * its CollectionsService, handing it the conditions on these tables (ruleOn, pending) its queries filter by, and the
 * event log through events' EventsRepository.
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

  /** For billing's collections queries: the rule is on for the subject's tenant. */
  ruleOn(rule: RuleId): SubjectFilter {
    return (tenantId) => enabled(tenantId, rule);
  }

  /**
   * For billing's collections queries: the rule is on for the subject's tenant and has not yet had its once-only
   * effect on the subject (an effect is claimed with claimEffect under the same subject key).
   */
  pending(rule: RuleId): SubjectFilter {
    return (tenantId, subject) =>
      `${enabled(tenantId, rule)} AND NOT EXISTS (SELECT 1 FROM automation_effects e
         WHERE e.tenant_id = ${tenantId} AND e.rule = '${rule}' AND e.subject_id = ${subject})`;
  }

  /** Deletes every row of the tenant in automation_effects, automation_rule_settings, in that order: its test clock is deleted (docs/test-clocks.md). */
  async purgeTenant(manager: EntityManager, tenantId: string): Promise<void> {
    for (const table of ['automation_effects', 'automation_rule_settings']) {
      await manager.query(`DELETE FROM ${table} WHERE tenant_id = $1`, [tenantId]);
    }
  }
}
