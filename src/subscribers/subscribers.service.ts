import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import type { RenderedPage } from '../common/envelope/envelope';
import { ApiError } from '../common/errors/api-error';
import { assertIfMatch } from '../common/http/etag';
import { isForeignKeyViolation, isUniqueViolation } from '../common/errors/postgres-errors';
import { newId } from '../common/ids';
import { mergeMetadata } from '../common/metadata';
import type { AuthContext } from '../common/request-context';
import { TransactionRunner, type Tx } from '../database/transaction-runner';
import { eventRecord, EventsService } from '../events';
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
import { SubscribersRepository } from './subscribers.repository';

/**
 * Turns the database's verdicts into the API's answers: a duplicate is SPEC 7's 409 duplicate_subscriber naming the
 * field; a billing profile that is not the tenant's (the composite foreign key holds the reference per tenant) is
 * 422 invalid_reference.
 */
function writeError(error: unknown, billingProfileId?: string | null): ApiError | null {
  if (isForeignKeyViolation(error, 'fk_subscribers_billing_profile')) {
    return new ApiError(
      'invalid_reference',
      `No billing profile ${billingProfileId} exists.`,
      'billing_profile_id',
    );
  }
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
    private readonly subscribers: SubscribersRepository,
  ) {}

  /** The subscriber, its `subscriber.created` event and that event's webhook deliveries: one statement. */
  async create(auth: AuthContext, dto: CreateSubscriberDto): Promise<CreatedSubscriberDto> {
    const subscriber = newSubscriber(auth.tenantId, dto);
    try {
      return await this.tx.runStatement(auth, async (tx) => {
        const event = eventRecord(
          {
            tenantId: subscriber.tenantId,
            type: 'subscriber.created',
            subjectId: subscriber.id,
            object: SubscriberDto.from(subscriber),
          },
          tx.scope,
        );
        const answer = CreatedSubscriberDto.from(subscriber);
        const claim = tx.claimInStatement(answer);
        const deliveries = await this.subscribers.insertWithEvent(tx.manager, subscriber, event, claim);
        this.events.queued(tx, deliveries);
        return answer;
      });
    } catch (error) {
      throw writeError(error, subscriber.billingProfileId) ?? error;
    }
  }

  async update(auth: AuthContext, id: string, dto: UpdateSubscriberDto): Promise<Subscriber> {
    const { tenantId } = auth;
    try {
      return await this.tx.run(auth, async (tx) => {
        const subscriber = await this.subscribers.lockForUpdate(tx.manager, tenantId, id);
        await assertIfMatch(() => SubscriberDto.from(subscriber));
        if (subscriber.status === SubscriberStatus.Archived) {
          throw new ApiError('invalid_state_transition', 'An archived subscriber is read-only.', 'status');
        }
        const changed = this.applyChanges(subscriber, dto);
        if (changed.length === 0) {
          return subscriber;
        }
        subscriber.updatedAt = new Date();
        await this.subscribers.update(tx.manager, subscriber);
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
      throw writeError(error, dto.billing_profile_id) ?? error;
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
    return this.tx.run(auth, (tx) => this.changeStatusIn(tx, tenantId, id, dto));
  }

  /** The status change in the caller's transaction (an automation rule's); the DTO is already checked. */
  async changeStatusIn(tx: Tx, tenantId: string, id: string, dto: ChangeStatusDto): Promise<SubscriberDto> {
    const suspending = dto.status === SubscriberStatus.Suspended;
    const subscriber = await this.subscribers.lockForUpdate(tx.manager, tenantId, id);
    await assertIfMatch(() => SubscriberDto.from(subscriber));
    const from = subscriber.status;
    subscriber.status = assertTransition(from, dto.status);
    subscriber.suspensionReason = suspending ? (dto.reason as SuspensionReason) : null;
    subscriber.updatedAt = new Date();
    await this.subscribers.update(tx.manager, subscriber);
    const answer = SubscriberDto.from(subscriber);
    await this.events.append(tx, {
      tenantId,
      type: 'subscriber.status_changed',
      subjectId: subscriber.id,
      object: answer,
      details: { from, to: dto.status, reason: dto.reason ?? null },
    });
    return answer;
  }

  /** The hottest read of the API: one prepared statement (docs/performance.md). */
  async getById(tenantId: string, id: string): Promise<Subscriber> {
    const subscriber = await this.subscribers.findById(this.dataSource.manager, tenantId, id);
    if (!subscriber) {
      throw ApiError.notFound('subscriber', id);
    }
    return subscriber;
  }

  /** The subscriber, read through the caller's transaction (or null). */
  findIn(manager: EntityManager, tenantId: string, id: string): Promise<Subscriber | null> {
    return this.subscribers.findById(manager, tenantId, id);
  }

  /**
   * For references from other records, in the caller's transaction: 422 invalid_reference naming `field` when the
   * subscriber is not the tenant's, 422 invalid_state_transition when it is archived.
   */
  async assertExists(
    manager: EntityManager,
    tenantId: string,
    id: string,
    field: string,
  ): Promise<Subscriber> {
    const subscriber = await this.subscribers.findById(manager, tenantId, id);
    if (!subscriber) {
      throw new ApiError('invalid_reference', `No subscriber ${id} exists.`, field);
    }
    if (subscriber.status === SubscriberStatus.Archived) {
      throw new ApiError('invalid_state_transition', `Subscriber ${id} is archived and read-only.`, field);
    }
    return subscriber;
  }

  list(tenantId: string, query: ListSubscribersQueryDto): Promise<RenderedPage> {
    const filter = {
      status: query.status,
      externalId: query.external_id,
      emailNormalized: normalizeEmail(query.email),
    };
    return this.subscribers.page(this.dataSource.manager, tenantId, filter, query);
  }

  /** Applies a PATCH to the entity and returns the names of the fields that really changed. */
  private applyChanges(subscriber: Subscriber, dto: UpdateSubscriberDto): string[] {
    const changed: string[] = [];
    const set = <K extends keyof Subscriber>(field: string, key: K, value: Subscriber[K]) => {
      if (JSON.stringify(subscriber[key]) === JSON.stringify(value)) {
        return;
      }
      subscriber[key] = value;
      changed.push(field);
    };
    if (dto.full_name !== undefined) {
      set('full_name', 'fullName', dto.full_name);
    }
    if (dto.email !== undefined) {
      set('email', 'email', dto.email);
      subscriber.emailNormalized = normalizeEmail(dto.email);
    }
    if (dto.phone !== undefined) {
      set('phone', 'phone', dto.phone);
    }
    // A profile that is not the tenant's fails the write on fk_subscribers_billing_profile (writeError).
    if (dto.billing_profile_id !== undefined) {
      set('billing_profile_id', 'billingProfileId', dto.billing_profile_id);
    }
    if (dto.address !== undefined) {
      // Only the parts sent change: the DTO instance carries the absent ones as undefined own properties.
      const sent =
        dto.address && Object.fromEntries(Object.entries(dto.address).filter(([, v]) => v !== undefined));
      set('address', 'address', sent === null ? null : { ...subscriber.address, ...sent });
    }
    if (dto.metadata !== undefined) {
      set('metadata', 'metadata', mergeMetadata(subscriber.metadata, dto.metadata));
    }
    return changed;
  }
}
