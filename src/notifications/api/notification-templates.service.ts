import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { Clock } from '../../common/clock';
import { ApiError } from '../../common/errors/api-error';
import { assertIfMatch } from '../../common/http/etag';
import type { AuthContext } from '../../common/request-context';
import { TransactionRunner } from '../../database/transaction-runner';
import { type EventRecord, EventsRepository, EventsService } from '../../events';
import { TenantSettingsRepository } from '../../gateway';
import {
  NotificationPreviewDto,
  NotificationTemplateDto,
  PreviewNotificationTemplateDto,
} from '../dto/notification-template.dto';
import {
  isNotificationKind,
  NOTIFICATION_KIND_SPECS,
  NOTIFICATION_KINDS,
  type NotificationKind,
} from '../kinds';
import { NotificationTemplateRecord } from '../notification.entity';
import { NotificationSettingsRepository } from '../notification-settings.repository';
import { notificationFor } from '../outbox/notification-trigger';
import { type ContentRequest, NotificationContent } from '../sending/notification-content';
import { type NotificationTemplate, templateProblems } from '../templates/template-renderer';

/** What `record_id` names for each kind's preview: the subject of the event that sends it. */
const PREVIEWED: Record<NotificationKind, string> = {
  invoice_issued: 'the id of an issued invoice (inv_…)',
  invoice_reminder: 'the id of an invoice a reminder was sent for (inv_…)',
  payment_received: 'the id of a payment (a transaction of kind payment, txn_…)',
  credit_note_issued: 'the id of a credit note (cn_…)',
  suspended_for_non_payment: 'the id of a subscriber suspended for non-payment (sub_…)',
  service_restored: 'the id of a subscriber made active again after a suspension for non-payment (sub_…)',
  service_activated: 'the id of an activated service (svc_…)',
  ticket_reply: "the id of a ticket with a public reply that is not the subscriber's own (tkt_…)",
  portal_invite: 'the id of a subscriber invited to the portal by email (sub_…)',
  portal_sign_in_code: 'the id of a subscriber who asked for a portal sign-in code (sub_…)',
};

/** The kind named in the path; 404 on `kind` for any other name. */
function kindOf(name: string): NotificationKind {
  if (!isNotificationKind(name)) {
    throw new ApiError(
      'not_found',
      `No notification kind has this name: the kinds are ${NOTIFICATION_KINDS.join(', ')}.`,
      'kind',
    );
  }
  return name;
}

/** 422 validation_failed for every problem of `template` (each on its part, under `prefix`), the first as the error. */
function assertTemplate(kind: NotificationKind, template: NotificationTemplate, prefix = ''): void {
  const problems = templateProblems(kind, template).map((problem) => ({
    code: 'validation_failed' as const,
    message: `${prefix}${problem.field}: ${problem.message}`,
    field: `${prefix}${problem.field}`,
  }));
  if (problems.length > 0) {
    const error = new ApiError('validation_failed', problems[0].message, problems[0].field);
    error.details = problems;
    throw error;
  }
}

/** The file names a kind's message would attach: an invoice's or a credit note's PDF, named as GET …/pdf names it. */
function attachmentsOf(kind: NotificationKind, event: EventRecord): string[] {
  const number = (event.data.object as { number?: unknown }).number;
  const documented = kind === 'invoice_issued' || kind === 'credit_note_issued';
  return documented && typeof number === 'string' ? [`${number}.pdf`] : [];
}

/**
 * The tenant's templates (GET, PUT and DELETE /notification-templates/{kind}) and their preview: a template rendered
 * against a real record, as the worker would render it, without sending anything.
 */
@Injectable()
export class NotificationTemplatesService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly transactionRunner: TransactionRunner,
    private readonly events: EventsService,
    private readonly eventLog: EventsRepository,
    private readonly settings: NotificationSettingsRepository,
    private readonly tenantSettings: TenantSettingsRepository,
    private readonly content: NotificationContent,
    private readonly clock: Clock,
  ) {}

  /** Every kind, in NOTIFICATION_KINDS order: the tenant's own template or the default. */
  async list(tenantId: string): Promise<NotificationTemplateDto[]> {
    const own = await this.settings.templates(this.dataSource.manager, tenantId);
    return NOTIFICATION_KINDS.map((kind) =>
      NotificationTemplateDto.of(kind, own.find((template) => template.kind === kind) ?? null),
    );
  }

  async get(tenantId: string, name: string): Promise<NotificationTemplateDto> {
    const kind = kindOf(name);
    return NotificationTemplateDto.of(
      kind,
      await this.settings.findTemplate(this.dataSource.manager, tenantId, kind),
    );
  }

  /** Saves the tenant's template of the kind once it passes templateProblems; a template sent unchanged is no change. */
  async save(
    auth: AuthContext,
    name: string,
    template: NotificationTemplate,
  ): Promise<NotificationTemplateDto> {
    const kind = kindOf(name);
    assertTemplate(kind, template);
    const { tenantId } = auth;
    return this.transactionRunner.run(auth, async (tx) => {
      const own = await this.lock(tx.manager, tenantId, kind);
      await assertIfMatch(() => NotificationTemplateDto.of(kind, own));
      if (
        own &&
        own.subject === template.subject &&
        own.text === template.text &&
        own.html === template.html
      ) {
        return NotificationTemplateDto.of(kind, own);
      }
      const now = this.clock.now();
      const saved = await this.settings.saveTemplate(
        tx.manager,
        Object.assign(new NotificationTemplateRecord(), {
          tenantId,
          kind,
          subject: template.subject,
          text: template.text,
          html: template.html,
          createdAt: now,
          updatedAt: now,
        } satisfies NotificationTemplateRecord),
      );
      const answer = NotificationTemplateDto.of(kind, saved);
      await this.events.append(tx, {
        tenantId,
        type: 'notification_template.updated',
        subjectId: kind,
        object: answer,
      });
      return answer;
    });
  }

  /** Removes the tenant's template of the kind (the default applies again) and answers it as it was. */
  async remove(auth: AuthContext, name: string): Promise<NotificationTemplateDto> {
    const kind = kindOf(name);
    const { tenantId } = auth;
    return this.transactionRunner.run(auth, async (tx) => {
      const own = await this.lock(tx.manager, tenantId, kind);
      if (!own) {
        throw new ApiError(
          'not_found',
          `The tenant has no template of its own for ${kind}: the default is in use already.`,
          'kind',
        );
      }
      const answer = NotificationTemplateDto.of(kind, own);
      await assertIfMatch(() => answer);
      await this.settings.deleteTemplate(tx.manager, tenantId, kind);
      await this.events.append(tx, {
        tenantId,
        type: 'notification_template.deleted',
        subjectId: kind,
        object: answer,
      });
      return answer;
    });
  }

  /**
   * The kind's message for the record `record_id` names, built from the record's latest event that sends this kind
   * (as the worker builds it from the event that caused it), with the body's template or the one in use. Reads only.
   */
  async preview(
    tenantId: string,
    name: string,
    dto: PreviewNotificationTemplateDto,
  ): Promise<NotificationPreviewDto> {
    const kind = kindOf(name);
    if (dto.template) {
      assertTemplate(kind, dto.template, 'template.');
    }
    const { manager } = this.dataSource;
    const event = await this.eventLog.latestOf(
      manager,
      tenantId,
      NOTIFICATION_KIND_SPECS[kind].trigger.event,
      dto.record_id,
      (candidate) => notificationFor(candidate)?.kind === kind,
    );
    if (!event) {
      throw new ApiError(
        'invalid_reference',
        `Nothing of this tenant's to preview ${kind} with: record_id must be ${PREVIEWED[kind]}.`,
        'record_id',
      );
    }
    const request: ContentRequest = {
      id: 'preview',
      tenantId,
      kind,
      subscriberId: notificationFor(event)?.subscriberId ?? null,
      event,
    };
    const { subscriber } = await this.content.recipient(manager, request);
    if (!subscriber) {
      throw new ApiError(
        'invalid_reference',
        `${event.subjectId} has no subscriber to write to: record_id must be ${PREVIEWED[kind]}.`,
        'record_id',
      );
    }
    const about = await this.content.about(manager, request, subscriber);
    if (typeof about === 'string') {
      throw new ApiError(
        'invalid_reference',
        `${dto.record_id} would send no ${kind} (${about}): record_id must be ${PREVIEWED[kind]}.`,
        'record_id',
      );
    }
    const mailing = await this.tenantSettings.mailing(manager, tenantId);
    if (!mailing) {
      throw ApiError.notFound('tenant', tenantId);
    }
    const rendered = await this.content.render(manager, request, mailing, subscriber, about, dto.template);
    return {
      kind,
      to: subscriber.email ? { name: subscriber.fullName, address: subscriber.email } : null,
      subject: rendered.subject,
      text: rendered.text,
      html: rendered.html,
      attachments: attachmentsOf(kind, event),
    };
  }

  /**
   * The tenant's template of `kind`, or null, with the pair (tenant, kind) locked until commit, whether a row exists
   * or not: concurrent PUTs and DELETEs of one kind, the first save included, go one after the other, each comparing
   * If-Match with what the one before left.
   */
  private async lock(
    manager: EntityManager,
    tenantId: string,
    kind: NotificationKind,
  ): Promise<NotificationTemplateRecord | null> {
    return this.settings.lockTemplate(manager, tenantId, kind);
  }
}
