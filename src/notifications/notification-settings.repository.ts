import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import type { NotificationKind } from './kinds';
import { NotificationPreference, NotificationTemplateRecord } from './notification.entity';

/** A tenant's own templates and its subscribers' preferences. */
@Injectable()
export class NotificationSettingsRepository {
  /** The tenant's own template of `kind`, or null while the shipped default is used. */
  findTemplate(
    manager: EntityManager,
    tenantId: string,
    kind: NotificationKind,
  ): Promise<NotificationTemplateRecord | null> {
    return manager.findOneBy(NotificationTemplateRecord, { tenantId, kind });
  }

  /**
   * The tenant's template of `kind`, or null, with the pair (tenant, kind) locked until commit (an advisory lock, so
   * the pair is locked whether a row exists or not: the first save too).
   */
  async lockTemplate(
    manager: EntityManager,
    tenantId: string,
    kind: NotificationKind,
  ): Promise<NotificationTemplateRecord | null> {
    await manager.query(
      `SELECT pg_advisory_xact_lock(hashtext('notification_templates:' || $1 || '/' || $2))`,
      [tenantId, kind],
    );
    return this.findTemplate(manager, tenantId, kind);
  }

  templates(manager: EntityManager, tenantId: string): Promise<NotificationTemplateRecord[]> {
    return manager.findBy(NotificationTemplateRecord, { tenantId });
  }

  /** Writes the tenant's template of its kind, keeping the first created_at; answers the row as stored. */
  async saveTemplate(
    manager: EntityManager,
    template: NotificationTemplateRecord,
  ): Promise<NotificationTemplateRecord> {
    const [row] = await manager.query<{ created_at: Date }[]>(
      `INSERT INTO notification_templates (tenant_id, kind, subject, text, html, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $6)
       ON CONFLICT (tenant_id, kind) DO UPDATE
         SET subject = EXCLUDED.subject, text = EXCLUDED.text, html = EXCLUDED.html, updated_at = EXCLUDED.updated_at
       RETURNING created_at`,
      [template.tenantId, template.kind, template.subject, template.text, template.html, template.updatedAt],
    );
    return { ...template, createdAt: row.created_at };
  }

  /** Removes the tenant's template of `kind` (the default applies again); answers whether there was one. */
  async deleteTemplate(manager: EntityManager, tenantId: string, kind: NotificationKind): Promise<boolean> {
    const result = await manager.delete(NotificationTemplateRecord, { tenantId, kind });
    return (result.affected ?? 0) > 0;
  }

  /** The kinds the subscriber set (a kind without a row is on). */
  preferences(
    manager: EntityManager,
    tenantId: string,
    subscriberId: string,
  ): Promise<NotificationPreference[]> {
    return manager.findBy(NotificationPreference, { tenantId, subscriberId });
  }

  /** Sets each kind of `choices` for the subscriber. */
  async savePreferences(
    manager: EntityManager,
    tenantId: string,
    subscriberId: string,
    choices: readonly (readonly [NotificationKind, boolean])[],
    at: Date,
  ): Promise<void> {
    for (const [kind, enabled] of choices) {
      await manager.query(
        `INSERT INTO notification_preferences (tenant_id, subscriber_id, kind, enabled, updated_at)
         VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (tenant_id, subscriber_id, kind) DO UPDATE SET enabled = EXCLUDED.enabled, updated_at = EXCLUDED.updated_at`,
        [tenantId, subscriberId, kind, enabled, at],
      );
    }
  }

  /** Deletes every row of the tenant in notification_preferences, notification_templates, in that order: its test clock is deleted (docs/test-clocks.md). */
  async purgeTenant(manager: EntityManager, tenantId: string): Promise<void> {
    for (const table of ['notification_preferences', 'notification_templates']) {
      await manager.query(`DELETE FROM ${table} WHERE tenant_id = $1`, [tenantId]);
    }
  }
}
