import type { Metadata } from '../common/metadata';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { BillingProfilesService } from '../billing/profiles/billing-profiles.service';
import { Page } from '../common/envelope/envelope';
import { ApiError } from '../common/errors/api-error';
import { isUniqueViolation } from '../common/errors/postgres-errors';
import { newId } from '../common/ids';
import { paginate } from '../common/pagination';
import { metadataProblem } from '../common/validation/is-metadata';
import { TransactionRunner, type Tx } from '../database/transaction-runner';
import type { AuthContext } from '../common/request-context';
import { EventsService } from '../events/events.service';
import { ChangeStatusDto } from './dto/change-status.dto';
import { CreateSubscriberDto } from './dto/create-subscriber.dto';
import { ListSubscribersQueryDto } from './dto/list-subscribers-query.dto';
import { CreatedSubscriberDto, SubscriberDto } from './dto/subscriber-response.dto';
import { UpdateSubscriberDto } from './dto/update-subscriber.dto';
import {
  assertTransition,
  SubscriberStatus,
  SUSPENSION_REASONS,
  SuspensionReason,
} from './subscriber-status';
import { Subscriber } from './subscriber.entity';
import {
  INSERT_SUBSCRIBER,
  SUBSCRIBER_PARAMS,
  SUBSCRIBER_BY_ID,
  subscriberFromRow,
  subscriberParams,
  type SubscriberRow,
} from './subscriber-row';
import { eventCtes, eventParams, eventRecord } from '../events/event-statement';
import { preparedQuery, type PreparedStatement } from '../database/prepared-query';
import { lockForUpdate } from '../database/lock-for-update';

/** Turns the database's duplicate verdicts into SPEC 7's 409 duplicate_subscriber, naming the field. */
function duplicateError(error: unknown): ApiError | null {
  if (isUniqueViolation(error, 'uq_subscribers_external_id')) {
    return new ApiError(
      'duplicate_subscriber',
      'A subscriber with the supplied external_id already exists.',
      'external_id',
    );
  }
  if (isUniqueViolation(error, 'uq_subscribers_email')) {
    return new ApiError(
      'duplicate_subscriber',
      'A subscriber with the supplied email already exists.',
      'email',
    );
  }
  return null;
}

/** POST /subscribers without a billing profile to check: the subscriber, its event and the event's deliveries. */
const CREATE_SUBSCRIBER: PreparedStatement = (() => {
  const ctes = eventCtes(true, SUBSCRIBER_PARAMS + 1);
  return {
    name: 'subscriber_create',
    text: `WITH subscriber AS (${INSERT_SUBSCRIBER}), ${ctes.sql} ${ctes.select}`,
  };
})();

const normalizeEmail = (email: string | null | undefined): string | null =>
  email ? email.toLowerCase() : null;

function newSubscriber(tenantId: string, dto: CreateSubscriberDto): Subscriber {
  const now = new Date();
  return Object.assign(new Subscriber(), {
    id: newId('sub'),
    tenantId,
    externalId: dto.external_id ?? null,
    fullName: dto.full_name,
    email: dto.email ?? null,
    emailNormalized: normalizeEmail(dto.email),
    phone: dto.phone ?? null,
    status: dto.status,
    suspensionReason: dto.status === SubscriberStatus.Suspended ? SuspensionReason.Manual : null,
    billingProfileId: dto.billing_profile_id ?? null,
    address: dto.address ? { ...dto.address } : null,
    metadata: dto.metadata ?? {},
    createdAt: now,
    updatedAt: now,
  });
}

@Injectable()
export class SubscribersService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly tx: TransactionRunner,
    private readonly events: EventsService,
    private readonly billingProfiles: BillingProfilesService,
  ) {}

  async create(auth: AuthContext, dto: CreateSubscriberDto): Promise<CreatedSubscriberDto> {
    const { tenantId } = auth;
    const subscriber = newSubscriber(tenantId, dto);
    const answer = CreatedSubscriberDto.from(subscriber);
    try {
      if (dto.billing_profile_id) {
        const billingProfileId = dto.billing_profile_id;
        return await this.tx.run(auth, async (tx) => {
          await this.billingProfiles.assertExists(
            tx.manager,
            tenantId,
            billingProfileId,
            'billing_profile_id',
          );
          await this.insertWithEvent(tx, subscriber);
          return answer;
        });
      }
      return await this.tx.runStatement(auth, async (tx) => {
        await this.insertWithEvent(tx, subscriber);
        return answer;
      });
    } catch (error) {
      throw duplicateError(error) ?? error;
    }
  }

  /** The subscriber, its `subscriber.created` event and that event's webhook deliveries: one statement. */
  private async insertWithEvent(tx: Tx, subscriber: Subscriber): Promise<void> {
    const event = eventRecord(
      {
        tenantId: subscriber.tenantId,
        type: 'subscriber.created',
        subjectId: subscriber.id,
        object: SubscriberDto.from(subscriber),
      },
      tx.scope,
    );
    const rows = await preparedQuery<{ deliveries: number }>(tx.manager, CREATE_SUBSCRIBER, [
      ...subscriberParams(subscriber),
      ...eventParams(event, true),
    ]);
    this.events.queued(tx, rows[0].deliveries);
  }

  async update(auth: AuthContext, id: string, dto: UpdateSubscriberDto): Promise<Subscriber> {
    const { tenantId } = auth;
    try {
      return await this.tx.run(auth, async (tx) => {
        const { manager } = tx;
        const subscriber = await lockForUpdate(manager, Subscriber, tenantId, id, 'subscriber');
        if (subscriber.status === SubscriberStatus.Archived) {
          throw new ApiError('invalid_state_transition', 'An archived subscriber is read-only.', 'status');
        }
        const changed = await this.applyChanges(manager, subscriber, dto);
        if (changed.length === 0) return subscriber;
        subscriber.updatedAt = new Date();
        await manager.save(Subscriber, subscriber);
        await this.events.append(tx, {
          tenantId,
          type: 'subscriber.updated',
          subjectId: subscriber.id,
          object: SubscriberDto.from(subscriber),
          details: { changed_fields: changed },
        });
        return subscriber;
      });
    } catch (error) {
      throw duplicateError(error) ?? error;
    }
  }

  changeStatus(auth: AuthContext, id: string, dto: ChangeStatusDto): Promise<SubscriberDto> {
    const { tenantId } = auth;
    const suspending = dto.status === SubscriberStatus.Suspended;
    if (suspending && dto.reason === undefined) {
      throw new ApiError(
        'missing_field',
        `reason is required when suspending: ${SUSPENSION_REASONS.join(', ')}.`,
        'reason',
      );
    }
    if (suspending && !SUSPENSION_REASONS.includes(dto.reason as SuspensionReason)) {
      throw new ApiError(
        'validation_failed',
        `reason must be one of ${SUSPENSION_REASONS.join(', ')}.`,
        'reason',
      );
    }
    return this.tx.run(auth, async (tx) => {
      const { manager } = tx;
      const subscriber = await lockForUpdate(manager, Subscriber, tenantId, id, 'subscriber');
      const from = subscriber.status;
      subscriber.status = assertTransition(from, dto.status);
      subscriber.suspensionReason = suspending ? (dto.reason as SuspensionReason) : null;
      subscriber.updatedAt = new Date();
      await manager.save(Subscriber, subscriber);
      const answer = SubscriberDto.from(subscriber);
      await this.events.append(tx, {
        tenantId,
        type: 'subscriber.status_changed',
        subjectId: subscriber.id,
        object: answer,
        details: { from, to: dto.status, reason: dto.reason ?? null },
      });
      return answer;
    });
  }

  /** The hottest read of the API: one plain statement, no query building (docs/performance.md). */
  async getById(tenantId: string, id: string): Promise<Subscriber> {
    const rows = await preparedQuery<SubscriberRow>(this.dataSource.manager, SUBSCRIBER_BY_ID, [
      tenantId,
      id,
    ]);
    if (rows.length === 0) throw ApiError.notFound('subscriber', id);
    return subscriberFromRow(rows[0]);
  }

  /** For references from other records: 422 invalid_reference naming `field` when the subscriber is not the tenant's. */
  async assertExists(
    manager: EntityManager,
    tenantId: string,
    id: string,
    field: string,
  ): Promise<Subscriber> {
    const subscriber = await manager.findOneBy(Subscriber, { tenantId, id });
    if (!subscriber) throw new ApiError('invalid_reference', `No subscriber ${id} exists.`, field);
    if (subscriber.status === SubscriberStatus.Archived) {
      throw new ApiError('invalid_state_transition', `Subscriber ${id} is archived and read-only.`, field);
    }
    return subscriber;
  }

  list(tenantId: string, query: ListSubscribersQueryDto): Promise<Page<Subscriber>> {
    const qb = this.dataSource
      .getRepository(Subscriber)
      .createQueryBuilder('subscriber')
      .where('subscriber.tenantId = :tenantId', { tenantId });
    if (query.status) qb.andWhere('subscriber.status = :status', { status: query.status });
    if (query.external_id)
      qb.andWhere('subscriber.externalId = :externalId', { externalId: query.external_id });
    if (query.email)
      qb.andWhere('subscriber.emailNormalized = :email', { email: normalizeEmail(query.email) });
    return paginate(qb, query, subscriberFromRow);
  }

  /** Applies a PATCH to the entity and returns the names of the fields that really changed. */
  private async applyChanges(
    manager: EntityManager,
    subscriber: Subscriber,
    dto: UpdateSubscriberDto,
  ): Promise<string[]> {
    const changed: string[] = [];
    const set = <K extends keyof Subscriber>(field: string, key: K, value: Subscriber[K]) => {
      if (JSON.stringify(subscriber[key]) === JSON.stringify(value)) return;
      subscriber[key] = value;
      changed.push(field);
    };
    if (dto.full_name !== undefined) set('full_name', 'fullName', dto.full_name);
    if (dto.email !== undefined) {
      set('email', 'email', dto.email);
      subscriber.emailNormalized = normalizeEmail(dto.email);
    }
    if (dto.phone !== undefined) set('phone', 'phone', dto.phone);
    if (dto.billing_profile_id) {
      await this.billingProfiles.assertExists(
        manager,
        subscriber.tenantId,
        dto.billing_profile_id,
        'billing_profile_id',
      );
    }
    if (dto.billing_profile_id !== undefined)
      set('billing_profile_id', 'billingProfileId', dto.billing_profile_id);
    if (dto.address !== undefined) {
      // Only the parts sent change: the DTO instance carries the absent ones as undefined own properties.
      const sent =
        dto.address && Object.fromEntries(Object.entries(dto.address).filter(([, v]) => v !== undefined));
      set('address', 'address', sent === null ? null : { ...subscriber.address, ...sent });
    }
    if (dto.metadata !== undefined)
      set('metadata', 'metadata', this.mergeMetadata(subscriber.metadata, dto.metadata));
    return changed;
  }

  /** Stripe-style: sent keys are set, keys sent as null are removed, `metadata: null` clears all. */
  private mergeMetadata(current: Metadata, patch: Metadata | null): Metadata {
    if (patch === null) return {};
    const merged: Metadata = { ...current };
    for (const [key, value] of Object.entries(patch)) {
      if (value === null) delete merged[key];
      else merged[key] = value;
    }
    const problem = metadataProblem(merged);
    if (problem) {
      const field = problem.path ? `metadata.${problem.path}` : 'metadata';
      throw new ApiError('validation_failed', problem.message, field);
    }
    return merged;
  }
}
