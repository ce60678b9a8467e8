import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ApiError } from '../../common/errors/api-error';
import { assertIfMatch } from '../../common/http/etag';
import {
  DEFAULT_NUMBER_FORMATS,
  NUMBERING_SERIES,
  parseNumberFormat,
  YEARLY_NEEDS_YEAR,
} from '../../common/numbering-format';
import type { AuthContext } from '../../common/request-context';
import { TransactionRunner } from '../../database/transaction-runner';
import { EventsService } from '../../events';
import {
  DEFAULT_LOCALE,
  DEFAULT_TIME_ZONE,
  TenantSettingsDto,
  UpdateTenantSettingsDto,
} from './dto/tenant-settings.dto';
import { TenantSettings } from './tenant-settings.entity';
import { TenantSettingsRepository } from './tenant-settings.repository';
import { Clock } from '../../common/clock';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';
import {
  answerMail,
  answerNotifications,
  assertMailComplete,
  assertPublicMailHost,
  MAIL_FIELDS,
  mailDefaults,
  NOTIFICATION_FIELDS,
  PASSWORD_FIELD,
  type SettingsColumn as Column,
} from './tenant-mail-settings';

/** Each API field (its dotted path) and its column: the one map PATCH, the answer and the event's names go by. */
const FIELDS: readonly (readonly [string, Column])[] = [
  ['legal_name', 'legalName'],
  ['address.line1', 'addressLine1'],
  ['address.line2', 'addressLine2'],
  ['address.city', 'addressCity'],
  ['address.postal_code', 'addressPostalCode'],
  ['address.region', 'addressRegion'],
  ['address.country', 'addressCountry'],
  ['tax_id', 'taxId'],
  ['registration_number', 'registrationNumber'],
  ['contact.email', 'contactEmail'],
  ['contact.phone', 'contactPhone'],
  ['contact.website', 'contactWebsite'],
  ['payment_instructions', 'paymentInstructions'],
  ['invoice_footer', 'invoiceFooter'],
  ['locale', 'locale'],
  ['time_zone', 'timeZone'],
  ['numbering.invoice.format', 'invoiceNumberFormat'],
  ['numbering.invoice.restart_yearly', 'invoiceNumberRestartYearly'],
  ['numbering.credit_note.format', 'creditNoteNumberFormat'],
  ['numbering.credit_note.restart_yearly', 'creditNoteNumberRestartYearly'],
  ...MAIL_FIELDS,
  ...NOTIFICATION_FIELDS,
];

/** The settings a tenant has before its first PATCH. */
function defaults(tenantId: string): TenantSettings {
  return Object.assign(new TenantSettings(), {
    tenantId,
    legalName: null,
    addressLine1: null,
    addressLine2: null,
    addressCity: null,
    addressPostalCode: null,
    addressRegion: null,
    addressCountry: null,
    taxId: null,
    registrationNumber: null,
    contactEmail: null,
    contactPhone: null,
    contactWebsite: null,
    paymentInstructions: null,
    invoiceFooter: null,
    locale: DEFAULT_LOCALE,
    timeZone: DEFAULT_TIME_ZONE,
    invoiceNumberFormat: DEFAULT_NUMBER_FORMATS.invoice,
    invoiceNumberRestartYearly: false,
    creditNoteNumberFormat: DEFAULT_NUMBER_FORMATS.credit_note,
    creditNoteNumberRestartYearly: false,
    ...mailDefaults(),
    updatedAt: null,
  } satisfies TenantSettings);
}

function answer(settings: TenantSettings): TenantSettingsDto {
  return {
    legal_name: settings.legalName,
    address: {
      line1: settings.addressLine1,
      line2: settings.addressLine2,
      city: settings.addressCity,
      postal_code: settings.addressPostalCode,
      region: settings.addressRegion,
      country: settings.addressCountry,
    },
    tax_id: settings.taxId,
    registration_number: settings.registrationNumber,
    contact: {
      email: settings.contactEmail,
      phone: settings.contactPhone,
      website: settings.contactWebsite,
    },
    payment_instructions: settings.paymentInstructions,
    invoice_footer: settings.invoiceFooter,
    locale: settings.locale,
    time_zone: settings.timeZone,
    numbering: {
      invoice: {
        format: settings.invoiceNumberFormat,
        restart_yearly: settings.invoiceNumberRestartYearly,
      },
      credit_note: {
        format: settings.creditNoteNumberFormat,
        restart_yearly: settings.creditNoteNumberRestartYearly,
      },
    },
    mail: answerMail(settings),
    notifications: answerNotifications(settings),
    updated_at: settings.updatedAt ? settings.updatedAt.toISOString() : null,
  };
}

/** The value sent at a dotted path: undefined when left out; null when it, or an object holding it, was sent null. */
function sentAt(dto: UpdateTenantSettingsDto, path: string): unknown {
  let value: unknown = dto;
  for (const key of path.split('.')) {
    if (value === null || value === undefined) {
      return value;
    }
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

/**
 * A series restarting each year needs a year in its format (else January's numbers repeat the last year's): checked
 * on the merged settings, so a PATCH sending only one of the two is held to the other's stored value.
 */
function assertYearlyFormats(dto: UpdateTenantSettingsDto, settings: TenantSettings): void {
  for (const series of NUMBERING_SERIES) {
    const prefix = series === 'invoice' ? 'invoiceNumber' : 'creditNoteNumber';
    const format = settings[`${prefix}Format`];
    if (settings[`${prefix}RestartYearly`] && !parseNumberFormat(format).hasYear) {
      const sentFormat = sentAt(dto, `numbering.${series}.format`) !== undefined;
      const field = `numbering.${series}.${sentFormat ? 'format' : 'restart_yearly'}`;
      throw new ApiError(
        'validation_failed',
        `numbering.${series}.format ${YEARLY_NEEDS_YEAR}: ${format} has neither`,
        field,
      );
    }
  }
}

/** The tenant as the issuer of its documents (GET/PATCH /tenant/settings). */
@Injectable()
export class TenantSettingsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly transactionRunner: TransactionRunner,
    private readonly events: EventsService,
    private readonly settings: TenantSettingsRepository,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async get(tenantId: string): Promise<TenantSettingsDto> {
    return answer((await this.settings.find(this.dataSource.manager, tenantId)) ?? defaults(tenantId));
  }

  /** Merges the fields sent into the stored settings (the defaults, on the first PATCH) under the row's lock. */
  async update(auth: AuthContext, dto: UpdateTenantSettingsDto): Promise<TenantSettingsDto> {
    const { tenantId } = auth;
    // Resolved before the row is locked: a slow DNS answer holds no lock.
    await assertPublicMailHost(dto.mail?.host, this.config.mailAllowPrivate);
    return this.transactionRunner.run(auth, async (tx) => {
      const settings = await this.settings.lock(tx.manager, defaults(tenantId));
      await assertIfMatch(() => answer(settings));
      const changed = FIELDS.filter(([path, column]) => {
        const value = sentAt(dto, path);
        // A password sent is a change even when it equals the stored one: no answer tells a guess was right.
        const passwordSent = path === PASSWORD_FIELD && typeof value === 'string';
        return value !== undefined && (passwordSent || value !== settings[column]);
      });
      if (changed.length === 0) {
        return answer(settings);
      }
      const merged = Object.assign(
        settings,
        Object.fromEntries(changed.map(([path, column]) => [column, sentAt(dto, path)])),
      );
      assertYearlyFormats(dto, merged);
      assertMailComplete(merged);
      merged.updatedAt = this.clock.now();
      await this.settings.update(tx.manager, merged, [...changed.map(([, column]) => column), 'updatedAt']);
      const result = answer(merged);
      await this.events.append(tx, {
        tenantId,
        type: 'tenant_settings.updated',
        subjectId: null,
        object: result,
        details: { changed_fields: changed.map(([path]) => path) },
      });
      return result;
    });
  }
}
