import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import type { RenderedPage } from '../common/envelope/envelope';
import type { ClaimInStatement } from '../common/request-context';
import { type PageQueryDto } from '../common/pagination';
import { type Condition, isoTimestampSql, type RenderedList, renderedPage } from '../database/rendered-page';
import { entityColumns } from '../database/entity-columns';
import { lockForUpdate } from '../database/lock-for-update';
import { preparedQuery, type PreparedStatement } from '../database/prepared-query';
import { EventsRepository, type EventRecord } from '../events';
import { SubscriberStatus } from './subscriber-status';
import { Subscriber } from './subscriber.entity';

/** The one definition of the table's columns: the entity's, in its order (a new column shows up here by itself). */
const COLUMNS = entityColumns(Subscriber);
const COLUMN_LIST = COLUMNS.map(({ column }) => column).join(', ');
/** Set by an update: every column but the row's key and its creation time. */
const UPDATED = COLUMNS.filter(({ property }) => !['tenantId', 'id', 'createdAt'].includes(property));

/** A new subscriber's INSERT, parameters `$1`… in the order of the entity's columns (bench/baseline-insert.ts too). */
export const INSERT_SUBSCRIBER =
  `INSERT INTO subscribers (${COLUMN_LIST}) ` +
  `VALUES (${COLUMNS.map((_, index) => `$${index + 1}`).join(', ')})`;

/** The hottest read of the API: one plain statement naming its columns (a kept plan survives an added column). */
const BY_ID: PreparedStatement = {
  name: 'subscriber_by_id',
  text: `SELECT ${COLUMN_LIST} FROM subscribers WHERE tenant_id = $1 AND id = $2`,
};

const UPDATE: PreparedStatement = {
  name: 'subscriber_update',
  text:
    `UPDATE subscribers SET ${UPDATED.map(({ column }, index) => `${column} = $${index + 3}`).join(', ')} ` +
    'WHERE tenant_id = $1 AND id = $2',
};

/** A `subscribers` row as `pg` returns it, by column name. */
type SubscriberRow = Record<string, unknown>;

function fromRow(row: SubscriberRow): Subscriber {
  const subscriber = new Subscriber();
  for (const { property, column } of COLUMNS) {
    Object.assign(subscriber, { [property]: row[column] });
  }
  return subscriber;
}

/**
 * The list, each item SubscriberDto.from as Postgres renders it, field for field (test/list-rendering.e2e-spec.ts
 * holds the two to the same answer).
 */
const SUBSCRIBER_LIST: RenderedList = {
  name: 'subscribers_page',
  table: 'subscribers',
  alias: 's',
  item: `json_build_object(
    'id', s.id, 'external_id', s.external_id, 'full_name', s.full_name, 'status', s.status,
    'billing_profile_id', s.billing_profile_id, 'created_at', ${isoTimestampSql('s.created_at')},
    'email', s.email, 'phone', s.phone, 'suspension_reason', s.suspension_reason, 'address', s.address,
    'metadata', s.metadata, 'updated_at', ${isoTimestampSql('s.updated_at')})`,
};

/** The row's values in the order of the entity's columns: the parameters of INSERT_SUBSCRIBER. */
export function subscriberParams(subscriber: Subscriber): unknown[] {
  return COLUMNS.map(({ property }) => subscriber[property]);
}

/** Filters of the list; email is compared normalized (lower case). */
export interface SubscriberFilter {
  status?: SubscriberStatus;
  externalId?: string;
  emailNormalized?: string | null;
}

/** The only place the `subscribers` table is read and written. */
@Injectable()
export class SubscribersRepository {
  constructor(private readonly events: EventsRepository) {}

  /**
   * POST /subscribers: the subscriber, its event and what the event queues (the outbox), one prepared statement, with
   * the request's idempotency claim when it carries one; answers how many deliveries were queued.
   */
  async insertWithEvent(
    manager: EntityManager,
    subscriber: Subscriber,
    event: EventRecord,
    claim: ClaimInStatement | null,
  ): Promise<number> {
    const subscriberCte = `subscriber AS (${INSERT_SUBSCRIBER})`;
    let statement: PreparedStatement;
    let params = subscriberParams(subscriber);
    if (claim) {
      const { sql, check } = claim.ctes(COLUMNS.length + 1);
      const callerParams = COLUMNS.length + claim.params.length;
      statement = this.events.statement(
        'subscriber_create_keyed',
        `${subscriberCte}, ${sql}`,
        callerParams,
        check,
      );
      params = [...params, ...claim.params];
    } else {
      statement = this.events.statement('subscriber_create', subscriberCte, COLUMNS.length);
    }
    const rows = await preparedQuery<{ deliveries: number }>(manager, statement, [
      ...params,
      ...this.events.params(event),
    ]);
    return rows[0].deliveries;
  }

  /** The tenant's subscriber, or null. */
  async findById(manager: EntityManager, tenantId: string, id: string): Promise<Subscriber | null> {
    const rows = await preparedQuery<SubscriberRow>(manager, BY_ID, [tenantId, id]);
    return rows.length === 0 ? null : fromRow(rows[0]);
  }

  /** The tenant's subscriber, row-locked until the transaction ends; 404 not_found when there is none. */
  lockForUpdate(manager: EntityManager, tenantId: string, id: string): Promise<Subscriber> {
    return lockForUpdate(manager, Subscriber, tenantId, id, 'subscriber');
  }

  /**
   * Those of the subscribers `ids` (any tenant's: the caller checks) whose status is one of `statuses`, row-locked in
   * id order until the transaction ends. A row that leaves those statuses while the lock is awaited is left out.
   */
  lockManyInStatus(
    manager: EntityManager,
    ids: readonly string[],
    statuses: readonly SubscriberStatus[],
  ): Promise<Subscriber[]> {
    return manager
      .getRepository(Subscriber)
      .createQueryBuilder('subscriber')
      .setLock('pessimistic_write')
      .where('subscriber.id = ANY(:ids) AND subscriber.status = ANY(:statuses)', {
        ids: [...new Set(ids)],
        statuses,
      })
      .orderBy('subscriber.id')
      .getMany();
  }

  /** Writes every column but the key and created_at: one UPDATE, no read-before-write. */
  async update(manager: EntityManager, subscriber: Subscriber): Promise<void> {
    await preparedQuery(manager, UPDATE, [
      subscriber.tenantId,
      subscriber.id,
      ...UPDATED.map(({ property }) => subscriber[property]),
    ]);
  }

  /** A page of the tenant's subscribers, newest first, each rendered by Postgres as SubscriberDto. */
  page(
    manager: EntityManager,
    tenantId: string,
    filter: SubscriberFilter,
    query: PageQueryDto,
  ): Promise<RenderedPage> {
    const conditions: Condition[] = [{ sql: 's.tenant_id = ?', values: [tenantId], indexed: true }];
    if (filter.status) {
      conditions.push({ sql: 's.status = ?', values: [filter.status] });
    }
    if (filter.externalId) {
      conditions.push({ sql: 's.external_id = ?', values: [filter.externalId] });
    }
    if (filter.emailNormalized) {
      conditions.push({ sql: 's.email_normalized = ?', values: [filter.emailNormalized] });
    }
    return renderedPage(manager, SUBSCRIBER_LIST, conditions, query);
  }
}
