import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { NOTIFICATION_KINDS, type NotificationKind } from '../../common/notification-kinds';
import type { SmtpSettings } from '../../config/smtp-settings';
import { entityColumns, entityFromRow } from '../../database/entity-columns';
import { KIND_COLUMNS, ownMailServer } from './tenant-mail-settings';
import { TenantSettings } from './tenant-settings.entity';

/** The issuer block's columns (TenantIssuerRow), of `tenants t LEFT JOIN tenant_settings s`. */
const ISSUER_COLUMNS = `t.name AS tenant_name, s.legal_name, s.address_line1, s.address_line2, s.address_city,
  s.address_postal_code, s.address_region, s.address_country, s.tax_id, s.registration_number, s.contact_email,
  s.contact_phone, s.contact_website, s.payment_instructions, s.invoice_footer, s.locale, s.time_zone`;

const SETTINGS_COLUMNS = entityColumns(TenantSettings);

/** The tenant as the issuer of its documents: its name and settings (none set: all null but the name). */
export interface TenantIssuerRow {
  tenant_name: string;
  legal_name: string | null;
  address_line1: string | null;
  address_line2: string | null;
  address_city: string | null;
  address_postal_code: string | null;
  address_region: string | null;
  address_country: string | null;
  tax_id: string | null;
  registration_number: string | null;
  contact_email: string | null;
  contact_phone: string | null;
  contact_website: string | null;
  payment_instructions: string | null;
  invoice_footer: string | null;
  locale: string | null;
  time_zone: string | null;
}

/** A tenant as the notifications worker reads it (TenantSettingsRepository.mailing). */
export interface TenantMailing {
  issuer: TenantIssuerRow;
  server: SmtpSettings | null;
  sends: Record<NotificationKind, boolean>;
}

/**
 * The only place the tenant_settings table is read and written. Billing reads it through here (exported by
 * src/gateway/index.ts): a document's issuer block and a numbering series' format.
 */
@Injectable()
export class TenantSettingsRepository {
  /** The tenant's settings row, or null while the defaults apply. */
  find(manager: EntityManager, tenantId: string): Promise<TenantSettings | null> {
    return manager.findOne(TenantSettings, { where: { tenantId } });
  }

  /** The tenant's name with its settings, for a document's issuer block; undefined when there is no such tenant. */
  async issuer(manager: EntityManager, tenantId: string): Promise<TenantIssuerRow | undefined> {
    const [row]: TenantIssuerRow[] = await manager.query(
      `SELECT ${ISSUER_COLUMNS} FROM tenants t LEFT JOIN tenant_settings s ON s.tenant_id = t.id WHERE t.id = $1`,
      [tenantId],
    );
    return row;
  }

  /**
   * What the notifications worker needs of a tenant: its issuer row (name, contacts, payment instructions, locale and
   * time zone; undefined when there is no such tenant), its own mail server (null: the instance's) and which kinds it
   * sends.
   */
  async mailing(manager: EntityManager, tenantId: string): Promise<TenantMailing | undefined> {
    // One statement: the issuer block and the settings row, its columns prefixed (all null while the defaults apply).
    const [row]: Record<string, unknown>[] = await manager.query(
      `SELECT ${ISSUER_COLUMNS},
              ${SETTINGS_COLUMNS.map((column) => `s.${column.column} AS "settings.${column.column}"`).join(', ')}
         FROM tenants t LEFT JOIN tenant_settings s ON s.tenant_id = t.id WHERE t.id = $1`,
      [tenantId],
    );
    if (!row) {
      return undefined;
    }
    const issuer = Object.fromEntries(
      Object.entries(row).filter(([name]) => !name.startsWith('settings.')),
    ) as unknown as TenantIssuerRow;
    const settings =
      row['settings.tenant_id'] === null ? null : entityFromRow(TenantSettings, row, 'settings.');
    const sends = Object.fromEntries(
      NOTIFICATION_KINDS.map((kind) => [kind, settings ? settings[KIND_COLUMNS[kind]] : true]),
    ) as Record<NotificationKind, boolean>;
    return { issuer, server: ownMailServer(settings), sends };
  }

  /**
   * The tenant's row, locked until commit, made from `initial` (the defaults) first when there is none: concurrent
   * PATCHes, the first ones included, merge one after the other.
   */
  async lock(manager: EntityManager, initial: TenantSettings): Promise<TenantSettings> {
    await manager.createQueryBuilder().insert().into(TenantSettings).values(initial).orIgnore().execute();
    return manager.findOneOrFail(TenantSettings, {
      where: { tenantId: initial.tenantId },
      lock: { mode: 'pessimistic_write' },
    });
  }

  /** Writes `columns` of the in-memory settings to the tenant's row. */
  async update(
    manager: EntityManager,
    settings: TenantSettings,
    columns: readonly (keyof TenantSettings)[],
  ): Promise<void> {
    const changes = Object.fromEntries(columns.map((column) => [column, settings[column]]));
    await manager.update(TenantSettings, { tenantId: settings.tenantId }, changes);
  }

  /** Deletes every tenant_settings row of the tenant: its test clock is deleted (docs/test-clocks.md). */
  async purgeTenant(manager: EntityManager, tenantId: string): Promise<void> {
    await manager.query('DELETE FROM tenant_settings WHERE tenant_id = $1', [tenantId]);
  }
}
