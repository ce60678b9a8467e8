import { Check, Column, Entity, ForeignKey, PrimaryColumn } from 'typeorm';
import { Tenant } from './tenant.entity';

/**
 * The tenant as the issuer of its documents (invoices, credit notes): legal details, payment instructions, the locale
 * and time zone documents are written in, and the format of each numbering series. One row per tenant, made by its
 * first PATCH /tenant/settings; without one the defaults apply (TenantSettingsService). Billing reads the row with SQL
 * of its own (the `<series>_number_format` and `<series>_number_restart_yearly` columns), never through this class.
 */
@Entity('tenant_settings')
@Check('chk_tenant_settings_country', `"address_country" IS NULL OR "address_country" ~ '^[A-Z]{2}$'`)
@Check(
  'chk_tenant_settings_number_formats',
  `char_length("invoice_number_format") BETWEEN 1 AND 40 AND char_length("credit_note_number_format") BETWEEN 1 AND 40`,
)
@Check('chk_tenant_settings_mail_port', `"mail_port" IS NULL OR "mail_port" BETWEEN 1 AND 65535`)
@Check('chk_tenant_settings_mail_tls', `"mail_tls" IS NULL OR "mail_tls" IN ('none', 'starttls', 'tls')`)
@Check(
  'chk_tenant_settings_mail_complete',
  `("mail_host" IS NULL) = ("mail_port" IS NULL) AND ("mail_host" IS NULL) = ("mail_tls" IS NULL) AND ("mail_host" IS NULL) = ("mail_from" IS NULL) AND ("mail_user" IS NULL) = ("mail_password" IS NULL) AND ("mail_host" IS NOT NULL OR ("mail_user" IS NULL AND "mail_reply_to" IS NULL))`,
)
export class TenantSettings {
  @ForeignKey(() => Tenant, { name: 'fk_tenant_settings_tenant' })
  @PrimaryColumn('text')
  tenantId: string;

  @Column('text', { nullable: true })
  legalName: string | null;

  @Column('text', { nullable: true })
  addressLine1: string | null;

  @Column('text', { nullable: true })
  addressLine2: string | null;

  @Column('text', { nullable: true })
  addressCity: string | null;

  @Column('text', { nullable: true })
  addressPostalCode: string | null;

  @Column('text', { nullable: true })
  addressRegion: string | null;

  /** ISO 3166-1 alpha-2, upper case. */
  @Column('text', { nullable: true })
  addressCountry: string | null;

  @Column('text', { nullable: true })
  taxId: string | null;

  @Column('text', { nullable: true })
  registrationNumber: string | null;

  @Column('text', { nullable: true })
  contactEmail: string | null;

  @Column('text', { nullable: true })
  contactPhone: string | null;

  @Column('text', { nullable: true })
  contactWebsite: string | null;

  /** Multi-line: how to pay (bank account, IBAN, reference to quote). */
  @Column('text', { nullable: true })
  paymentInstructions: string | null;

  /** Multi-line text printed at the foot of every invoice. */
  @Column('text', { nullable: true })
  invoiceFooter: string | null;

  /** BCP 47, canonical (`en-US`): how amounts and dates are written on documents. */
  @Column('text')
  locale: string;

  /** IANA (`Europe/Lisbon`): the zone the dates of documents are read in. */
  @Column('text')
  timeZone: string;

  /** The invoice series' format (src/common/numbering-format.ts). */
  @Column('text')
  invoiceNumberFormat: string;

  /** The invoice series counts from 1 again each calendar year of the issue date. */
  @Column('boolean')
  invoiceNumberRestartYearly: boolean;

  @Column('text')
  creditNoteNumberFormat: string;

  @Column('boolean')
  creditNoteNumberRestartYearly: boolean;

  /**
   * The tenant's own mail server (issue 31), all null while the instance's (SMTP_URL, MAIL_FROM) is used. The password
   * is kept as given, as a webhook's secret is: it is what the SMTP login needs, and the database is the trust
   * boundary. It never leaves through the API (password_set), an event or a log line.
   */
  @Column('text', { nullable: true })
  mailHost: string | null;

  @Column('integer', { nullable: true })
  mailPort: number | null;

  /** none, starttls or tls (src/config/smtp-settings.ts). */
  @Column('text', { nullable: true })
  mailTls: string | null;

  @Column('text', { nullable: true })
  mailUser: string | null;

  @Column('text', { nullable: true })
  mailPassword: string | null;

  /** One mailbox: `billing@example.com` or `Example ISP <billing@example.com>`. */
  @Column('text', { nullable: true })
  mailFrom: string | null;

  @Column('text', { nullable: true })
  mailReplyTo: string | null;

  /** Whether the tenant sends each kind of notification at all (src/common/notification-kinds.ts); all on by default. */
  @Column('boolean', { default: true })
  notifyInvoiceIssued: boolean;

  @Column('boolean', { default: true })
  notifyPaymentReceived: boolean;

  @Column('boolean', { default: true })
  notifyCreditNoteIssued: boolean;

  @Column('boolean', { default: true })
  notifyInvoiceReminder: boolean;

  @Column('boolean', { default: true })
  notifySuspendedForNonPayment: boolean;

  @Column('boolean', { default: true })
  notifyServiceRestored: boolean;

  @Column('boolean', { default: true })
  notifyServiceActivated: boolean;

  @Column('boolean', { default: true })
  notifyTicketReply: boolean;

  @Column('boolean', { default: true })
  notifyPortalInvite: boolean;

  @Column('boolean', { default: true })
  notifyPortalSignInCode: boolean;

  /** null until a PATCH first changes something (the row then still answers what the defaults did). */
  @Column({ type: 'timestamptz', precision: 3, nullable: true })
  updatedAt: Date | null;
}
