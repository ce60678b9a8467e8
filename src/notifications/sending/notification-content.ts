import { Inject, Injectable } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type { EntityManager } from 'typeorm';
import { PORTAL_CODE_MINTER, type PortalCodeMinter } from '../../common/auth/portal';
import { BillingDocuments, InvoicesService, LedgerService } from '../../billing';
import { Clock } from '../../common/clock';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';
import { parseMailbox } from '../../config/mailbox';
import type { SmtpSettings } from '../../config/smtp-settings';
import { type EventRecord, EventsRepository } from '../../events';
import {
  DEFAULT_LOCALE,
  DEFAULT_TIME_ZONE,
  TenantSettingsRepository,
  TenantTime,
  type TenantMailing,
} from '../../gateway';
import { ServicePlansService } from '../../provisioning';
import { type Subscriber, SubscribersService } from '../../subscribers';
import { type TicketDetailDto, TicketsService } from '../../tickets';
import { alwaysSent, type NotificationKind } from '../kinds';
import type { MailAttachment } from '../mail/message';
import type { MailContent } from '../mail/mail-sender';
import type { SkipReason } from '../notification.entity';
import { NotificationSettingsRepository } from '../notification-settings.repository';
import { DEFAULT_TEMPLATES } from '../templates/default-templates';
import {
  type CreditNoteRecord,
  type InvoiceRecord,
  type KindRecords,
  notificationView,
  type PaymentRecord,
  type PortalSecretRecord,
  type ServiceRecord,
} from '../templates/notification-context';
import { renderNotification, type NotificationTemplate } from '../templates/template-renderer';

/** What a notification comes to: a message ready for its server, or why nothing is sent. */
export type PreparedNotification =
  | { skip: SkipReason; subscriberId: string | null; recipient: string | null }
  | {
      skip: null;
      server: SmtpSettings;
      /** True when `server` is the tenant's own (its settings), false when it is the instance's (SMTP_URL). */
      ownServer: boolean;
      mail: MailContent;
      subscriberId: string;
      recipient: string;
    };

/** How a tenant's mail goes out: its mailing settings and the server (its own, else the instance's). */
export interface MailChannel {
  mailing: TenantMailing;
  server: SmtpSettings;
}

/** A notification as the content is built for it: its kind, its cause and, when known, its subscriber. */
export interface ContentRequest {
  id: string;
  tenantId: string;
  kind: NotificationKind;
  subscriberId: string | null;
  event: EventRecord;
}

type Json = Record<string, unknown>;

const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);

/** What a preview shows for a portal mail's secret: it never mints one (docs/decisions.md). */
export const PREVIEW_SECRET: PortalSecretRecord = {
  code: '[one-time code, minted when sent]',
  link: '[one-time link, minted when sent]',
};

/** Minutes between two ISO timestamps, rounded up (a sign-in code's validity). */
function minutesBetween(from: string, to: string): number {
  return Math.max(0, Math.ceil((Date.parse(to) - Date.parse(from)) / 60_000));
}

/**
 * Builds a notification's message from its event (the record as it was when the event happened), the subscriber and
 * the tenant as they are now, and the tenant's template (or the shipped default); decides, with the reason, when
 * nothing is to be sent. Reads only: the worker and the preview both use it.
 */
@Injectable()
export class NotificationContent {
  /** A ticket reply's ticket, read once per request: its subscriber and its number and subject both come from it. */
  private readonly ticketReads = new WeakMap<ContentRequest, Promise<TicketDetailDto | null>>();
  private minter: PortalCodeMinter | undefined;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly clock: Clock,
    private readonly tenantSettings: TenantSettingsRepository,
    private readonly settings: NotificationSettingsRepository,
    private readonly subscribers: SubscribersService,
    private readonly events: EventsRepository,
    private readonly documents: BillingDocuments,
    private readonly invoices: InvoicesService,
    private readonly ledger: LedgerService,
    private readonly plans: ServicePlansService,
    private readonly tickets: TicketsService,
    private readonly tenantTime: TenantTime,
    private readonly moduleRef: ModuleRef,
  ) {}

  /**
   * How the tenant's mail of `kind` goes out, or why none does: the first of prepare's checks, which needs neither the
   * event nor the subscriber (a tenant without a mail server skips every notification on its settings alone).
   */
  async channel(
    manager: EntityManager,
    request: Pick<ContentRequest, 'tenantId' | 'kind'>,
  ): Promise<MailChannel | SkipReason> {
    const mailing = await this.tenantSettings.mailing(manager, request.tenantId);
    // A test tenant's mail goes only through its own server, never the instance's (docs/test-clocks.md).
    const testTenant = (await this.tenantTime.frozenAt(request.tenantId)) !== null;
    const server = mailing?.server ?? (testTenant ? null : this.config.mail);
    if (!mailing || !server) {
      return testTenant && mailing ? 'test_tenant_without_mail_server' : 'no_mail_server';
    }
    if (!mailing.sends[request.kind]) {
      return 'kind_disabled_by_tenant';
    }
    return { mailing, server };
  }

  /** The message of `request` through `channel` (answered by channel()), or why none is sent. */
  async prepare(
    manager: EntityManager,
    request: ContentRequest,
    channel: MailChannel,
  ): Promise<PreparedNotification> {
    const skipped = (skip: SkipReason, subscriber: Subscriber | null = null): PreparedNotification => ({
      skip,
      subscriberId: subscriber?.id ?? request.subscriberId,
      recipient: subscriber?.email ?? null,
    });
    const { mailing, server } = channel;
    const { subscriberId, subscriber } = await this.recipient(manager, request);
    if (!subscriber) {
      return skipped(subscriberId ? 'record_gone' : 'no_subscriber');
    }
    if (!subscriber.email) {
      return skipped('no_email', subscriber);
    }
    if (!(await this.wanted(manager, request, subscriber))) {
      return skipped('declined_by_subscriber', subscriber);
    }
    const records = await this.about(manager, request, subscriber);
    if (typeof records === 'string') {
      return skipped(records, subscriber);
    }
    // The last step before rendering: a portal mail's code is minted now, for this message only.
    const about = await this.withSecret(request, records);
    if (about === null) {
      return skipped('no_longer_valid', subscriber);
    }
    const rendered = await this.render(manager, request, mailing, subscriber, about);
    if ('portal' in about) {
      // The subject is kept in the notification log: templates cannot put the code there, and it is masked anyway.
      rendered.subject = rendered.subject.split(about.portal.code).join('[code]');
    }
    return {
      skip: null,
      server,
      ownServer: Boolean(mailing.server),
      subscriberId: subscriber.id,
      recipient: subscriber.email,
      mail: {
        to: { name: subscriber.fullName, address: subscriber.email },
        ...rendered,
        attachments: await this.attachments(request),
        message_id: `<${request.id}@${messageIdDomain(server.from)}>`,
        date: this.clock.now(),
      },
    };
  }

  /** The subject, text and HTML of the request's kind for `subscriber`, from the tenant's template or the default. */
  async render(
    manager: EntityManager,
    request: Pick<ContentRequest, 'tenantId' | 'kind'>,
    mailing: TenantMailing,
    subscriber: Pick<Subscriber, 'fullName' | 'email'>,
    about: KindRecords,
    template?: NotificationTemplate,
  ): Promise<NotificationTemplate> {
    const own = template ?? (await this.settings.findTemplate(manager, request.tenantId, request.kind));
    const view = notificationView(
      {
        tenant: mailing.issuer,
        subscriber: { full_name: subscriber.fullName, email: subscriber.email },
        about,
      },
      {
        locale: mailing.issuer.locale ?? DEFAULT_LOCALE,
        timeZone: mailing.issuer.time_zone ?? DEFAULT_TIME_ZONE,
      },
    );
    return renderNotification(own ?? DEFAULT_TEMPLATES[request.kind], view);
  }

  /** Who the notification is for: the subscriber the event names, or a ticket reply's ticket's; null when none. */
  async recipient(
    manager: EntityManager,
    request: ContentRequest,
  ): Promise<{ subscriberId: string | null; subscriber: Subscriber | null }> {
    const subscriberId =
      request.subscriberId ??
      (request.kind === 'ticket_reply' ? ((await this.ticketOf(request))?.subscriber_id ?? null) : null);
    const subscriber = subscriberId
      ? await this.subscribers.findIn(manager, request.tenantId, subscriberId)
      : null;
    return { subscriberId, subscriber };
  }

  private ticketOf(request: ContentRequest): Promise<TicketDetailDto | null> {
    let read = this.ticketReads.get(request);
    if (!read) {
      const ticketId = text((request.event.data.object as Json).ticket_id);
      read = ticketId
        ? this.tickets.getDetail(request.tenantId, ticketId).catch(() => null)
        : Promise.resolve(null);
      this.ticketReads.set(request, read);
    }
    return read;
  }

  /**
   * A portal mail's records with a code minted for this message by the portal (PORTAL_CODE_MINTER, found at run time:
   * notifications reads no portal table); null when its invite or sign-in code can no longer sign in. Other kinds
   * pass as they are.
   */
  private async withSecret(request: ContentRequest, about: KindRecords): Promise<KindRecords | null> {
    if (about.kind !== 'portal_invite' && about.kind !== 'portal_sign_in_code') {
      return about;
    }
    const id = text((request.event.data.object as Json).id);
    this.minter ??= this.moduleRef.get<PortalCodeMinter>(PORTAL_CODE_MINTER, { strict: false });
    const minted = id
      ? await this.minter.mint(
          about.kind === 'portal_invite' ? 'invite' : 'sign_in_code',
          request.tenantId,
          id,
        )
      : null;
    return minted ? { ...about, portal: minted } : null;
  }

  /** Legal notices and portal sign-in mail always; other kinds unless the subscriber switched them off. */
  private async wanted(
    manager: EntityManager,
    request: ContentRequest,
    subscriber: Subscriber,
  ): Promise<boolean> {
    if (alwaysSent(request.kind)) {
      return true;
    }
    const choices = await this.settings.preferences(manager, request.tenantId, subscriber.id);
    return choices.find((choice) => choice.kind === request.kind)?.enabled ?? true;
  }

  /** The records the kind's templates speak of, or why there is nothing to say. */
  async about(
    manager: EntityManager,
    request: ContentRequest,
    subscriber: Subscriber,
  ): Promise<KindRecords | SkipReason> {
    const { event } = request;
    const object = event.data.object as Json;
    const at = event.createdAt.toISOString();
    switch (request.kind) {
      case 'invoice_issued':
        return { kind: request.kind, invoice: object as unknown as InvoiceRecord };
      case 'invoice_reminder':
        return {
          kind: request.kind,
          invoice: object as unknown as InvoiceRecord,
          reminder: {
            offset_days: Number(event.data.offset_days ?? 0),
            amount_due: Number(event.data.amount_due ?? (object.amount_due as number)),
          },
        };
      case 'payment_received':
        return { kind: request.kind, payment: object as unknown as PaymentRecord };
      case 'credit_note_issued':
        return {
          kind: request.kind,
          credit_note: object as unknown as CreditNoteRecord,
          invoice: { number: await this.invoiceNumber(request, text(object.invoice_id)) },
        };
      case 'suspended_for_non_payment': {
        const owed = await this.ledger.owed(manager, request.tenantId, subscriber.id);
        return {
          kind: request.kind,
          owed: owed.map((row) => ({ amount: row.balance, currency: row.currency })),
          suspended_at: at,
        };
      }
      case 'service_restored': {
        const suspension = await this.events.suspensionBefore(
          manager,
          { ...event, txId: event.txId ?? '0', data: event.data as Json & { object: Json } },
          subscriber.id,
        );
        return suspension?.reason === 'non_payment'
          ? { kind: request.kind, restored_at: at }
          : 'suspension_not_for_non_payment';
      }
      case 'service_activated': {
        const plan = await this.plans.get(request.tenantId, String(object.plan_id)).catch(() => null);
        return {
          kind: request.kind,
          service: object as unknown as ServiceRecord,
          plan: { name: plan?.name ?? '' },
        };
      }
      case 'ticket_reply': {
        const ticket = await this.ticketOf(request);
        if (!ticket) {
          return 'record_gone';
        }
        return {
          kind: request.kind,
          ticket: { number: ticket.number, subject: ticket.subject },
          comment: {
            body: text(object.body) ?? '',
            author: text(object.author),
            created_at: text(object.created_at) ?? at,
          },
        };
      }
      case 'portal_invite':
        return { kind: request.kind, portal: PREVIEW_SECRET, expires_at: text(object.expires_at) ?? at };
      case 'portal_sign_in_code':
        return {
          kind: request.kind,
          portal: PREVIEW_SECRET,
          valid_minutes: minutesBetween(text(object.created_at) ?? at, text(object.expires_at) ?? at),
        };
    }
  }

  private async invoiceNumber(request: ContentRequest, invoiceId: string | null): Promise<string | null> {
    if (!invoiceId) {
      return null;
    }
    const found = await this.invoices.getById(request.tenantId, invoiceId).catch(() => null);
    return found?.invoice.number ?? null;
  }

  /** The PDF of an invoice or a credit note, rendered as GET …/pdf answers it. */
  private async attachments(request: ContentRequest): Promise<MailAttachment[]> {
    const id = text((request.event.data.object as Json).id);
    if (!id || (request.kind !== 'invoice_issued' && request.kind !== 'credit_note_issued')) {
      return [];
    }
    const document =
      request.kind === 'invoice_issued'
        ? await this.documents.invoicePdf(request.tenantId, id)
        : await this.documents.creditNotePdf(request.tenantId, id);
    return [{ filename: document.filename, content: document.pdf, contentType: 'application/pdf' }];
  }
}

/** The domain of the sender's address, for the Message-ID (`<ntf_…@example.com>`). */
export function messageIdDomain(from: string): string {
  const mailbox = parseMailbox(from);
  return 'address' in mailbox
    ? mailbox.address.slice(mailbox.address.lastIndexOf('@') + 1).toLowerCase()
    : 'localhost';
}
