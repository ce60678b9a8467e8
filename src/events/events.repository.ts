import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import type { RenderedPage } from '../common/envelope/envelope';
import { ApiError } from '../common/errors/api-error';
import { type Condition, isoTimestampSql, type RenderedList, renderedPage } from '../database/rendered-page';
import { preparedQuery, type PreparedStatement } from '../database/prepared-query';
import { entityColumns } from '../database/entity-columns';
import type { ListEventsQueryDto } from './dto/list-events-query.dto';
import { EventRecord } from './event.entity';
import { patternsFor } from './new-event';

/** The `$n` placeholders of the event's own parameters, by property, for a fan-out's CTE to refer to. */
export type EventPlaceholders = Record<keyof EventRecord, string>;

/**
 * What another module writes beside every event, in the event's own statement (the transactional outbox): webhooks
 * queues one delivery per subscription. Supplied through EventsService.useFanOut, so events never names its tables.
 */
export interface OutboxFanOut {
  /**
   * Its CTE(s), `name AS (…)`, to follow the event's; its own parameters numbered from `$<firstParam>`. `select`
   * selects the number of rows it queued, as `deliveries`.
   */
  ctes(event: EventPlaceholders, firstParam: number): { sql: string; select: string };
  /** Its own parameters for this event, in the order of its CTEs' `$<firstParam>`…. */
  params(record: EventRecord): unknown[];
  /**
   * The same for many events at once (EventsRepository.appendMany): its CTE(s) read the events from the relation
   * `source`, whose columns are the events' own (snake_case) plus `patterns` (patternsFor of the type).
   */
  rowsCtes(source: string): { sql: string; select: string };
}

/** Common table expressions that write an event and, with a fan-out, what it queues. */
export interface EventCtes {
  /** `event AS (…)[, …]`, to follow `WITH` (and any CTEs of the caller's own, comma-separated). */
  sql: string;
  /** Selects the number of deliveries queued, as `deliveries` (0 without a fan-out). */
  select: string;
}

/** EventRecord's columns, from its decorators: the one list the INSERT and the row mapper use. */
const EVENT_COLUMNS = entityColumns(EventRecord);

/**
 * The event log is the transactional outbox: the event and what `fanOut` queues for it (the webhook deliveries) are
 * written by one statement, so they commit together, with the change the caller writes beside them, and cost one
 * round trip. Parameters (eventParams) are numbered from `$<firstParam>`, after the caller's own.
 */
export function eventCtes(fanOut: OutboxFanOut | null, firstParam = 1): EventCtes {
  const placeholders = Object.fromEntries(
    EVENT_COLUMNS.map((column, index) => [column.property, `$${firstParam + index}`]),
  ) as EventPlaceholders;
  const event =
    `event AS (INSERT INTO events (${EVENT_COLUMNS.map((column) => column.column).join(', ')}) ` +
    `VALUES (${EVENT_COLUMNS.map((column) => placeholders[column.property]).join(', ')}))`;
  if (!fanOut) {
    return { sql: event, select: 'SELECT 0 AS deliveries' };
  }
  const queued = fanOut.ctes(placeholders, firstParam + EVENT_COLUMNS.length);
  return { sql: `${event}, ${queued.sql}`, select: queued.select };
}

/** The parameters of eventCtes, in its order. */
export function eventParams(record: EventRecord, fanOut: OutboxFanOut | null): unknown[] {
  const params = EVENT_COLUMNS.map((column) => record[column.property]);
  return fanOut ? [...params, ...fanOut.params(record)] : params;
}

/**
 * The list, each item EventResponseDto.from as Postgres renders it, field for field (test/list-rendering.e2e-spec.ts
 * holds the two to the same answer).
 */
const EVENT_LIST: RenderedList = {
  name: 'events_page',
  table: 'events',
  alias: 'e',
  item: `json_build_object(
    'id', e.id, 'type', e.type, 'subject_id', e.subject_id, 'data', e.data,
    'request_id', e.request_id, 'actor', e.actor, 'created_at', ${isoTimestampSql('e.created_at')})`,
};

/** The event log: its append statements (with and without the fan-out), its list and its reads. */
@Injectable()
export class EventsRepository {
  private fanOut: OutboxFanOut | null = null;
  /** Prepared statements by name, built on first use, once the fan-out (if any) is registered. */
  private readonly statements = new Map<string, PreparedStatement>();

  /** Registers what every fanned-out event queues in its own statement (see OutboxFanOut). */
  useFanOut(fanOut: OutboxFanOut): void {
    this.fanOut = fanOut;
    this.statements.clear();
  }

  /**
   * `WITH <callerCtes>, <the event's CTEs> <select>`: a caller's own write, its event and the event's fan-out in one
   * prepared statement; the caller's parameters are `$1`…`$<callerParams>`, the event's (eventParams) follow.
   * Without a registered fan-out (the CLI) the event is written alone, under a name of its own. A `check` (a boolean
   * SQL expression over the caller's CTEs, such as an idempotency claim's) is the final SELECT's WHERE: a check that
   * raises aborts the statement, and every write of it with it.
   */
  statement(
    name: string,
    callerCtes: string | null = null,
    callerParams = 0,
    check?: string,
  ): PreparedStatement {
    return this.build(this.fanOut, name, callerCtes, callerParams, check);
  }

  /** The parameters of `statement`'s event, with its fan-out's. */
  params(record: EventRecord): unknown[] {
    return eventParams(record, this.fanOut);
  }

  /**
   * Writes the event, with its fan-out unless `fanOut` is false (a webhook test ping, addressed to one endpoint by
   * its caller); answers the number of deliveries queued.
   */
  async append(manager: EntityManager, record: EventRecord, fanOut: boolean): Promise<number> {
    const queue = fanOut ? this.fanOut : null;
    const statement = this.build(queue, 'event_append', null, 0);
    const rows = await preparedQuery<{ deliveries: number }>(manager, statement, eventParams(record, queue));
    return rows[0].deliveries;
  }

  private build(
    fanOut: OutboxFanOut | null,
    name: string,
    callerCtes: string | null,
    callerParams: number,
    check?: string,
  ): PreparedStatement {
    // A connection keeps each name's text: the statement without a fan-out is named apart.
    const key = fanOut ? name : `${name}_alone`;
    let statement = this.statements.get(key);
    if (!statement) {
      const ctes = eventCtes(fanOut, callerParams + 1);
      const all = callerCtes ? `${callerCtes}, ${ctes.sql}` : ctes.sql;
      const select = check
        ? `SELECT queued.deliveries FROM (${ctes.select}) AS queued WHERE ${check}`
        : ctes.select;
      statement = { name: key, text: `WITH ${all} ${select}` };
      this.statements.set(key, statement);
    }
    return statement;
  }

  /**
   * Writes many events, and their fan-out, in one statement (a bill run's batch): the rows travel as one JSON
   * parameter. Answers the number of deliveries queued.
   */
  async appendMany(manager: EntityManager, records: EventRecord[]): Promise<number> {
    if (records.length === 0) {
      return 0;
    }
    const columns = EVENT_COLUMNS.map((column) => column.column);
    const types: Record<string, string> = { data: 'jsonb', actor: 'jsonb', created_at: 'timestamptz' };
    const definition = [
      ...columns.map((column) => `${column} ${types[column] ?? 'text'}`),
      'patterns text[]',
    ];
    const input = `input AS (SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(${definition.join(', ')}))`;
    const insert = `event AS (INSERT INTO events (${columns.join(', ')}) SELECT ${columns.join(', ')} FROM input)`;
    const queued = this.fanOut?.rowsCtes('input');
    const sql = queued
      ? `WITH ${input}, ${insert}, ${queued.sql} ${queued.select}`
      : `WITH ${input}, ${insert} SELECT 0 AS deliveries`;
    const rows = records.map((record) => ({
      ...Object.fromEntries(EVENT_COLUMNS.map((column) => [column.column, record[column.property]])),
      patterns: patternsFor(record.type),
    }));
    const [result]: { deliveries: number }[] = await manager.query(sql, [JSON.stringify(rows)]);
    return result.deliveries;
  }

  /** A page of the tenant's events, newest first, each rendered by Postgres as EventResponseDto. */
  page(manager: EntityManager, tenantId: string, query: ListEventsQueryDto): Promise<RenderedPage> {
    const conditions: Condition[] = [{ sql: 'e.tenant_id = ?', values: [tenantId], indexed: true }];
    if (query.type?.endsWith('.*')) {
      // `_` is a LIKE wildcard and a legal type character: escape it so the prefix matches literally.
      const prefix = query.type.slice(0, -1).replace(/[\\%_]/g, (c) => `\\${c}`);
      conditions.push({ sql: `e.type LIKE ? ESCAPE '\\'`, values: [`${prefix}%`] });
    } else if (query.type) {
      conditions.push({ sql: 'e.type = ?', values: [query.type] });
    }
    if (query.subject_id) {
      conditions.push({ sql: 'e.subject_id = ?', values: [query.subject_id], indexed: true });
    }
    return renderedPage(manager, EVENT_LIST, conditions, query);
  }

  findById(manager: EntityManager, tenantId: string, id: string): Promise<EventRecord | null> {
    return manager.findOneBy(EventRecord, { tenantId, id });
  }

  async getById(manager: EntityManager, tenantId: string, id: string): Promise<EventRecord> {
    const event = await this.findById(manager, tenantId, id);
    if (!event) {
      throw ApiError.notFound('event', id);
    }
    return event;
  }
}
