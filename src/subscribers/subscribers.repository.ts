import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { Page } from '../common/envelope/envelope';
import { paginate, type PageQueryDto } from '../common/pagination';
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
   * POST /subscribers: the subscriber, its event and what the event queues (the outbox), one prepared statement;
   * answers how many deliveries were queued.
   */
  async insertWithEvent(manager: EntityManager, subscriber: Subscriber, event: EventRecord): Promise<number> {
    const statement = this.events.statement(
      'subscriber_create',
      `subscriber AS (${INSERT_SUBSCRIBER})`,
      COLUMNS.length,
    );
    const rows = await preparedQuery<{ deliveries: number }>(manager, statement, [
      ...subscriberParams(subscriber),
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

  /** Writes every column but the key and created_at: one UPDATE, no read-before-write. */
  async update(manager: EntityManager, subscriber: Subscriber): Promise<void> {
    await preparedQuery(manager, UPDATE, [
      subscriber.tenantId,
      subscriber.id,
      ...UPDATED.map(({ property }) => subscriber[property]),
    ]);
  }

  /** A page of the tenant's subscribers, newest first, mapped straight from the rows. */
  page(
    manager: EntityManager,
    tenantId: string,
    filter: SubscriberFilter,
    query: PageQueryDto,
  ): Promise<Page<Subscriber>> {
    const qb = manager
      .getRepository(Subscriber)
      .createQueryBuilder('subscriber')
      .where('subscriber.tenantId = :tenantId', { tenantId });
    if (filter.status) {
      qb.andWhere('subscriber.status = :status', { status: filter.status });
    }
    if (filter.externalId) {
      qb.andWhere('subscriber.externalId = :externalId', { externalId: filter.externalId });
    }
    if (filter.emailNormalized) {
      qb.andWhere('subscriber.emailNormalized = :email', { email: filter.emailNormalized });
    }
    return paginate(qb, query, fromRow);
  }
}
