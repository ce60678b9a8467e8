import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import { Page } from '../common/envelope/envelope';
import { ApiError } from '../common/errors/api-error';
import { newId } from '../common/ids';
import { paginate } from '../common/pagination';
import { requestContext } from '../common/request-context';
import { ListEventsQueryDto } from './dto/list-events-query.dto';
import { EventRecord } from './event.entity';

export interface NewEvent {
  tenantId: string;
  type: string;
  subjectId: string | null;
  object: object;
  /** Extra keys beside `object` in `data`, e.g. `changed_fields` or `{from, to, reason}`. */
  details?: Record<string, unknown>;
}

/** Called for every appended event inside its transaction: the transactional outbox (webhook deliveries). */
export type EventListener = (manager: EntityManager, event: EventRecord) => Promise<void>;

@Injectable()
export class EventsService {
  private readonly listeners: EventListener[] = [];

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Registers a listener run in the same transaction as each append. */
  onAppend(listener: EventListener): void {
    this.listeners.push(listener);
  }

  /**
   * Appends an event through the caller's transaction, so it commits or rolls back with the change.
   * `fanOut: false` keeps it from the listeners (a webhook test ping goes to one endpoint only).
   */
  async append(
    manager: EntityManager,
    event: NewEvent,
    options: { fanOut?: boolean } = {},
  ): Promise<EventRecord> {
    const record = manager.create(EventRecord, {
      id: newId('evt'),
      tenantId: event.tenantId,
      type: event.type,
      subjectId: event.subjectId,
      data: { object: event.object, ...event.details },
      requestId: requestContext.requestId(),
      actor: requestContext.actor(),
      createdAt: new Date(),
    });
    // jsonb `data` is free-form, which TypeORM's deep-partial insert type cannot express.
    await manager.insert(EventRecord, record as QueryDeepPartialEntity<EventRecord>);
    if (options.fanOut !== false) for (const listener of this.listeners) await listener(manager, record);
    return record;
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
    return paginate(qb, query);
  }

  async getById(tenantId: string, id: string): Promise<EventRecord> {
    const event = await this.dataSource.getRepository(EventRecord).findOneBy({ tenantId, id });
    if (!event) throw ApiError.notFound('event', id);
    return event;
  }
}
