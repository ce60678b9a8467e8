import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Clock } from '../../common/clock';
import { ApiError } from '../../common/errors/api-error';
import { assertIfMatch } from '../../common/http/etag';
import type { AuthContext } from '../../common/request-context';
import { TransactionRunner } from '../../database/transaction-runner';
import { EventsService } from '../../events';
import { SubscribersService, SubscriberStatus } from '../../subscribers';
import {
  legalNoticeMessage,
  NotificationPreferencesDto,
  type UpdateNotificationPreferencesDto,
} from '../dto/notification-preferences.dto';
import { alwaysSent, NOTIFICATION_KINDS, type NotificationKind } from '../kinds';
import { NotificationSettingsRepository } from '../notification-settings.repository';

/**
 * A subscriber's notification preferences (issue 31): a sub-resource of the subscriber owned by notifications, so the
 * subscriber's own record and statements stay as they are. A kind without a stored row is on; legal notices are
 * always on.
 */
@Injectable()
export class NotificationPreferencesService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly transactionRunner: TransactionRunner,
    private readonly events: EventsService,
    private readonly subscribers: SubscribersService,
    private readonly settings: NotificationSettingsRepository,
    private readonly clock: Clock,
  ) {}

  /** 404 not_found when the tenant has no such subscriber. */
  async get(tenantId: string, subscriberId: string): Promise<NotificationPreferencesDto> {
    const subscriber = await this.subscribers.getById(tenantId, subscriberId);
    const rows = await this.settings.preferences(this.dataSource.manager, tenantId, subscriber.id);
    return NotificationPreferencesDto.from(subscriber.id, rows);
  }

  /**
   * Switches the kinds sent, under the subscriber's row lock (the first lock of the lock order), comparing If-Match
   * with the preferences as GET answers them. An archived subscriber is read-only (409, as PATCH /subscribers/{id}).
   * Only kinds whose value really changes are written and named in `notification_preferences.updated`; a PATCH
   * that changes nothing writes nothing and emits no event.
   */
  update(
    auth: AuthContext,
    subscriberId: string,
    dto: UpdateNotificationPreferencesDto,
  ): Promise<NotificationPreferencesDto> {
    const { tenantId } = auth;
    const sent = dto as Partial<Record<NotificationKind, boolean>>;
    // The body's validation refuses it already; checked again here, where the rule is kept.
    const legalOff = NOTIFICATION_KINDS.find((kind) => alwaysSent(kind) && sent[kind] === false);
    if (legalOff) {
      throw new ApiError('validation_failed', legalNoticeMessage(legalOff), legalOff);
    }
    return this.transactionRunner.run(auth, async (tx) => {
      const subscriber = await this.subscribers.lockIn(tx.manager, tenantId, subscriberId);
      const before = NotificationPreferencesDto.from(
        subscriber.id,
        await this.settings.preferences(tx.manager, tenantId, subscriber.id),
      );
      await assertIfMatch(() => before);
      if (subscriber.status === SubscriberStatus.Archived) {
        throw new ApiError('invalid_state_transition', 'An archived subscriber is read-only.', 'status');
      }
      const changed = NOTIFICATION_KINDS.filter(
        (kind) => !alwaysSent(kind) && sent[kind] !== undefined && sent[kind] !== before.preferences[kind],
      );
      if (changed.length === 0) {
        return before;
      }
      await this.settings.savePreferences(
        tx.manager,
        tenantId,
        subscriber.id,
        changed.map((kind) => [kind, sent[kind] as boolean] as const),
        this.clock.now(),
      );
      const answer = NotificationPreferencesDto.from(
        subscriber.id,
        await this.settings.preferences(tx.manager, tenantId, subscriber.id),
      );
      await this.events.append(tx, {
        tenantId,
        type: 'notification_preferences.updated',
        subjectId: subscriber.id,
        object: answer,
        details: { changed_fields: changed },
      });
      return answer;
    });
  }
}
