import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { Clock } from '../common/clock';
import type { RenderedPage } from '../common/envelope/envelope';
import { ApiError } from '../common/errors/api-error';
import { assertIfMatch } from '../common/http/etag';
import { automationScope, type AuthContext } from '../common/request-context';
import type { CsvPage } from '../database/rendered-page';
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
import { applyChanges, newSubscriber, normalizeEmail, writeError } from './subscriber-records';
import { type OutstandingBalancePolicy, SUBSCRIBER_FOLLOWS_SERVICE } from './subscriber-rules';
import { SubscribersRepository, type SubscriberFilter } from './subscribers.repository';
import { SubscriberSearchRepository, type SubscriberSearchSource } from './subscriber-search.repository';
import { phoneDigits, toE164 } from './phone';
import { rareWords, SearchTextStatistics } from './search-text-sample';

/** The list's filters as the repository takes them: email normalized, phone in E.164. */
function listFilter(query: ListSubscribersQueryDto): SubscriberFilter {
  return {
    statuses: query.status,
    externalId: query.external_id,
    emailNormalized: normalizeEmail(query.email),
    phone: query.phone === undefined ? undefined : (toE164(query.phone) ?? undefined),
  };
}

@Injectable()
export class SubscribersService {
  private outstandingBalance: OutstandingBalancePolicy | null = null;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly transactionRunner: TransactionRunner,
    private readonly events: EventsService,
    private readonly subscribers: SubscribersRepository,
    private readonly search: SubscriberSearchRepository,
    private readonly searchStatistics: SearchTextStatistics,
    private readonly clock: Clock,
  ) {}

  /** Registers how what a subscriber owes is found, so a subscriber who owes money is not archived. */
  useOutstandingBalance(policy: OutstandingBalancePolicy): void {
    this.outstandingBalance = policy;
  }

  /** The subscriber, its `subscriber.created` event and that event's webhook deliveries: one statement. */
  async create(auth: AuthContext, dto: CreateSubscriberDto): Promise<CreatedSubscriberDto> {
    const subscriber = newSubscriber(auth.tenantId, dto, this.clock.now());
    try {
      return await this.transactionRunner.runStatement(auth, async (tx) => {
        const event = eventRecord(
          {
            tenantId: subscriber.tenantId,
            type: 'subscriber.created',
            subjectId: subscriber.id,
            object: SubscriberDto.from(subscriber),
          },
          tx.scope,
          subscriber.createdAt,
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
      return await this.transactionRunner.run(auth, async (tx) => {
        const subscriber = await this.subscribers.lockForUpdate(tx.manager, tenantId, id);
        await assertIfMatch(() => SubscriberDto.from(subscriber));
        if (subscriber.status === SubscriberStatus.Archived) {
          throw new ApiError('invalid_state_transition', 'An archived subscriber is read-only.', 'status');
        }
        const changed = applyChanges(subscriber, dto);
        if (changed.length === 0) {
          return subscriber;
        }
        subscriber.updatedAt = this.clock.now();
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
    return this.transactionRunner.run(auth, (tx) => this.changeStatusIn(tx, tenantId, id, dto));
  }

  /** The status change in the caller's transaction (an automation rule's); the DTO is already checked. */
  async changeStatusIn(tx: Tx, tenantId: string, id: string, dto: ChangeStatusDto): Promise<SubscriberDto> {
    const suspending = dto.status === SubscriberStatus.Suspended;
    const subscriber = await this.subscribers.lockForUpdate(tx.manager, tenantId, id);
    await assertIfMatch(() => SubscriberDto.from(subscriber));
    const from = subscriber.status;
    subscriber.status = assertTransition(from, dto.status);
    if (dto.status === SubscriberStatus.Archived) {
      // Under the subscriber's row lock: archiving must not freeze a debt (write its invoices off first).
      await this.assertNothingOwed(tx.manager, tenantId, id);
    }
    subscriber.suspensionReason = suspending ? (dto.reason as SuspensionReason) : null;
    subscriber.updatedAt = this.clock.now();
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

  /** 409 balance_outstanding while the subscriber owes money in any currency. */
  private async assertNothingOwed(manager: EntityManager, tenantId: string, id: string): Promise<void> {
    const owed = (await this.outstandingBalance?.(manager, tenantId, id)) ?? [];
    if (owed.length > 0) {
      const amounts = owed.map(({ currency, balance }) => `${balance} ${currency}`).join(', ');
      throw new ApiError(
        'balance_outstanding',
        `Subscriber ${id} still owes ${amounts} (minor units): collect it, or write off its open invoices, before archiving.`,
        'status',
      );
    }
  }

  /**
   * subscriber_follows_service, in the caller's transaction: the subscriber row-locked (first in the lock order,
   * before its services), for a service to be created on it; 404 not_found when the tenant has none.
   */
  lockIn(manager: EntityManager, tenantId: string, id: string): Promise<Subscriber> {
    return this.subscribers.lockForUpdate(manager, tenantId, id);
  }

  /**
   * subscriber_follows_service, in the caller's transaction: those of `ids` (any tenant's) whose status is one of
   * `statuses`, row-locked in id order (take them before any service lock).
   */
  lockInStatus(
    manager: EntityManager,
    ids: readonly string[],
    statuses: readonly SubscriberStatus[],
  ): Promise<Subscriber[]> {
    return ids.length === 0 ? Promise.resolve([]) : this.subscribers.lockManyInStatus(manager, ids, statuses);
  }

  /**
   * subscriber_follows_service: moves a subscriber the caller has locked to `to`, in the caller's transaction, with a
   * `subscriber.status_changed` whose actor is the rule and whose reason says which service moved it.
   */
  async followService(
    tx: Tx,
    subscriber: Subscriber,
    to: SubscriberStatus,
    reason: string,
  ): Promise<SubscriberDto> {
    const from = subscriber.status;
    subscriber.status = assertTransition(from, to);
    subscriber.suspensionReason = null;
    subscriber.updatedAt = this.clock.now();
    await this.subscribers.update(tx.manager, subscriber);
    const answer = SubscriberDto.from(subscriber);
    const { actor } = automationScope(SUBSCRIBER_FOLLOWS_SERVICE);
    await this.events.append(tx.withScope({ requestId: tx.scope.requestId, actor }), {
      tenantId: subscriber.tenantId,
      type: 'subscriber.status_changed',
      subjectId: subscriber.id,
      object: answer,
      details: { from, to, reason },
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

  /** The tenant's live subscriber with this email (case-insensitive; archived ones never), or null (the portal's sign-in). */
  findByEmail(tenantId: string, email: string): Promise<Subscriber | null> {
    const normalized = normalizeEmail(email);
    return normalized
      ? this.subscribers.findByEmail(this.dataSource.manager, tenantId, normalized)
      : Promise.resolve(null);
  }

  /** The tenant's subscribers among `externalIds`, row-locked in id order in the caller's transaction (an import's). */
  lockByExternalIds(
    manager: EntityManager,
    tenantId: string,
    externalIds: readonly string[],
  ): Promise<Subscriber[]> {
    return this.subscribers.lockByExternalIds(manager, tenantId, externalIds);
  }

  /** The subscriber, read through the caller's transaction (or null). */
  findIn(manager: EntityManager, tenantId: string, id: string): Promise<Subscriber | null> {
    return this.subscribers.findById(manager, tenantId, id);
  }

  /**
   * For references from other records, in the caller's transaction: 422 invalid_reference naming `field` when the
   * subscriber is not the tenant's, 409 invalid_state_transition when it is archived (unless `archived` is
   * `'allowed'`: money received from an archived subscriber is still recorded). With `lock`, the row is locked until
   * the transaction ends (first in the lock order), in the same statement.
   */
  async assertExists(
    manager: EntityManager,
    tenantId: string,
    id: string,
    field: string,
    options: { archived?: 'allowed' | 'refused'; lock?: boolean } = {},
  ): Promise<Subscriber> {
    const subscriber = options.lock
      ? await this.subscribers.findForUpdate(manager, tenantId, id)
      : await this.subscribers.findById(manager, tenantId, id);
    if (!subscriber) {
      throw new ApiError('invalid_reference', `No subscriber ${id} exists.`, field);
    }
    if (subscriber.status === SubscriberStatus.Archived && options.archived !== 'allowed') {
      throw new ApiError('invalid_state_transition', `Subscriber ${id} is archived and read-only.`, field);
    }
    return subscriber;
  }

  /** The list, newest first; with `q`, the search, best match first (docs/decisions.md, "Search"). */
  async list(tenantId: string, query: ListSubscribersQueryDto): Promise<RenderedPage> {
    const filter = listFilter(query);
    if (query.q === undefined) {
      return this.subscribers.page(this.dataSource.manager, tenantId, filter, query);
    }
    const manager = this.dataSource.manager;
    const sample = await this.searchStatistics.sample(manager);
    const search = {
      text: query.q,
      e164: toE164(query.q),
      phoneDigits: phoneDigits(query.q),
      rareWords: rareWords(query.q, sample),
    };
    return this.search.page(manager, tenantId, search, filter, query);
  }

  /**
   * The list's page as the CSV export's records, rendered by Postgres (SUBSCRIBER_CSV in subscribers.repository);
   * null for a search (`q`): its pages are JSON only (list).
   */
  csvPage(tenantId: string, query: ListSubscribersQueryDto): Promise<CsvPage> | null {
    if (query.q !== undefined) {
      return null;
    }
    return this.subscribers.csvPage(this.dataSource.manager, tenantId, listFilter(query), query);
  }

  /** Registers another module's rows that find subscribers by `q` (provisioning: its services' PPPoE usernames). */
  useSearchSource(source: SubscriberSearchSource): void {
    this.search.useSource(source);
  }
}
