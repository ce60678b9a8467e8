import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Page } from '../common/envelope/envelope';
import { ApiError } from '../common/errors/api-error';
import { paginate } from '../common/pagination';
import { ListEventsQueryDto } from './dto/list-events-query.dto';
import { EventRecord } from './event.entity';
import { preparedQuery } from '../database/prepared-query';
import type { Tx } from '../database/transaction-runner';
import { APPEND_EVENT, eventFromRow, eventParams, eventRecord, type NewEvent } from './event-statement';

export type { NewEvent } from './event-statement';

/** Called once a transaction that queued webhook deliveries has committed. */
export type DeliveriesQueuedListener = () => void;

@Injectable()
export class EventsService {
  private readonly deliveriesQueued: DeliveriesQueuedListener[] = [];

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Registers a listener told when a transaction that queued webhook deliveries commits (the worker wakes). */
  onDeliveriesQueued(listener: DeliveriesQueuedListener): void {
    this.deliveriesQueued.push(listener);
  }

  /**
   * Appends an event through the caller's transaction, so it commits or rolls back with the change, and queues its
   * webhook deliveries in the same statement (the outbox, see eventCtes). `fanOut: false` queues none (a webhook test
   * ping goes to one endpoint only).
   */
  async append(tx: Tx, event: NewEvent, options: { fanOut?: boolean } = {}): Promise<EventRecord> {
    const record = eventRecord(event, tx.scope);
    const fanOut = options.fanOut !== false;
    const statement = fanOut ? APPEND_EVENT.fannedOut : APPEND_EVENT.alone;
    const rows = await preparedQuery<{ deliveries: number }>(
      tx.manager,
      statement,
      eventParams(record, fanOut),
    );
    this.queued(tx, rows[0].deliveries);
    return record;
  }

  /** When `deliveries` (the count an eventCtes statement selected) is more than zero, tells the listeners on commit. */
  queued(tx: Tx, deliveries: number): void {
    if (deliveries > 0) for (const listener of this.deliveriesQueued) tx.afterCommit(listener);
  }

  list(tenantId: string, query: ListEventsQueryDto): Promise<Page<EventRecord>> {
    const qb = this.dataSource
      .getRepository(EventRecord)
      .createQueryBuilder('event')
      .where('event.tenantId = :tenantId', {
        tenantId,
      });
    if (query.type?.endsWith('.*')) {
      // `_` is a LIKE wildcard and a legal type character: escape it so the prefix matches literally.
      const prefix = query.type.slice(0, -1).replace(/[\\%_]/g, (c) => `\\${c}`);
      qb.andWhere(`event.type LIKE :typePrefix ESCAPE '\\'`, { typePrefix: `${prefix}%` });
    } else if (query.type) {
      qb.andWhere('event.type = :type', { type: query.type });
    }
    if (query.subject_id) qb.andWhere('event.subjectId = :subjectId', { subjectId: query.subject_id });
    return paginate(qb, query, eventFromRow);
  }

  async getById(tenantId: string, id: string): Promise<EventRecord> {
    const event = await this.dataSource.getRepository(EventRecord).findOneBy({ tenantId, id });
    if (!event) throw ApiError.notFound('event', id);
    return event;
  }
}
