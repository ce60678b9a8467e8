import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import type { RenderedPage } from '../common/envelope/envelope';
import { ApiError } from '../common/errors/api-error';
import { type Condition, isoTimestampSql, type RenderedList, renderedPage } from '../database/rendered-page';
import { preparedQuery, type PreparedStatement } from '../database/prepared-query';
import { SqlParams } from '../database/sql-params';
import { entityColumns } from '../database/entity-columns';
import type { ListEventsQueryDto } from './dto/list-events-query.dto';
import { EventRecord } from './event.entity';
import { distinctData } from './distinct-data';
import { patternsFor } from './new-event';

/** The `$n` placeholders of the event's own parameters, by property, for a fan-out's CTE to refer to. */
export type EventPlaceholders = Record<keyof EventRecord, string>;

/**
 * What another module writes beside an event, in the event's own statement (the transactional outbox): webhooks
 * queues one delivery per subscription, notifications one notification per event that tells a subscriber something.
 * Supplied through EventsService.useFanOut, so events never names their tables.
 */
export interface OutboxFanOut {
  /**
   * Told apart in a prepared statement's name when it applies ('' for one that applies to every event): a name keeps
   * one text, so an event it does not apply to is written by a statement without its CTEs, under another name.
   */
  readonly tag: string;
  /** Whether it queues anything for this event; its CTEs are left out when not. */
  appliesTo(record: EventRecord): boolean;
  /**
   * Its CTE(s), `name AS (…)`, to follow the event's `record`, whose parameters' placeholders are `event`; its own
   * parameters added to `params`. `count` is an expression of the number of rows it queued.
   */
  ctes(event: EventPlaceholders, record: EventRecord, params: SqlParams): { sql: string; count: string };
  /**
   * The same for many events at once (EventsRepository.appendMany): its CTE(s) read the events from the relation
   * `source`, whose columns are the events' own (snake_case), `patterns` (patternsFor of the type) and the
   * `rowColumns` of every fan-out.
   */
  rowsCtes(source: string): { sql: string; count: string };
  /** Text columns it adds to each event's row for appendMany, by name: their value for a record. */
  readonly rowColumns?: Readonly<Record<string, (record: EventRecord) => string | null>>;
}
/** An event as a consumer of the log reads it (automation's rules), with the transaction that wrote it. */
export interface LogEvent {
  txId: string;
  id: string;
  tenantId: string;
  type: string;
  subjectId: string | null;
  data: { object: Record<string, unknown>; [key: string]: unknown };
}

/** How a caller's statement shapes the event it carries (EventsRepository.statement). */
export interface EventStatementShape {
  /**
   * A boolean SQL expression over the caller's CTEs, the final SELECT's WHERE: one that raises (an idempotency
   * claim's check) aborts the statement, and every write of it with it.
   */
  check?: string;
  /**
   * The event's `data` as an SQL expression of its parameter's placeholder, for what only the statement knows (a
   * number its own CTE takes from a counter): e.g. `jsonb_set(<placeholder>::jsonb, '{object,number}', …)`.
   */
  data?: (placeholder: string) => string;
  /** More output columns of the final SELECT, over the caller's CTEs (`(SELECT number FROM ticket) AS number`). */
  columns?: string;
}

/** Common table expressions that write an event and, with a fan-out, what it queues. */
export interface EventCtes {
  /** `event AS (…)[, …]`, to follow `WITH` (and any CTEs of the caller's own, comma-separated). */
  sql: string;
  /** Selects the number of rows the fan-outs queued, as `deliveries` (0 without one). */
  select: string;
}

/** EventRecord's columns, from its decorators: the one list the INSERT and the row mapper use. */
const EVENT_COLUMNS = entityColumns(EventRecord);

/**
 * The event log is the transactional outbox: the event and what the fan-outs queue for it (webhook deliveries,
 * notifications) are written by one statement, so they commit together, with the change the caller writes beside
 * them, and cost one round trip. The event's parameters (and the fan-outs') are added to `params`, after the caller's
 * own. Only the fan-outs that apply to the record are included (see OutboxFanOut.tag).
 */
export function eventCtes(
  fanOuts: readonly OutboxFanOut[],
  record: EventRecord,
  params: SqlParams,
  data?: (placeholder: string) => string,
): EventCtes {
  const placeholders = Object.fromEntries(
    EVENT_COLUMNS.map((column) => [column.property, params.add(record[column.property])]),
  ) as EventPlaceholders;
  const valueOf = (property: keyof EventRecord): string =>
    property === 'data' && data ? data(placeholders.data) : placeholders[property];
  const event =
    `event AS (INSERT INTO events (${EVENT_COLUMNS.map((column) => column.column).join(', ')}) ` +
    `VALUES (${EVENT_COLUMNS.map((column) => valueOf(column.property)).join(', ')}))`;
  const queued = fanOuts.map((fanOut) => fanOut.ctes(placeholders, record, params));
  return {
    sql: [event, ...queued.map((each) => each.sql)].join(', '),
    select: `SELECT ${queued.length === 0 ? '0' : queued.map((each) => each.count).join(' + ')} AS deliveries`,
  };
}

/**
 * The list, each item EventResponseDto.from as Postgres renders it, field for field (test/api/list-rendering.e2e-spec.ts
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

/** `type=`: one exact type, or a prefix ending in `.*`. */
function typeCondition(type: string): Condition {
  if (!type.endsWith('.*')) {
    return { sql: 'e.type = ?', values: [type] };
  }
  // `_` is a LIKE wildcard and a legal type character: escape it so the prefix matches literally.
  const prefix = type.slice(0, -1).replace(/[\\%_]/g, (c) => `\\${c}`);
  return { sql: `e.type LIKE ? ESCAPE '\\'`, values: [`${prefix}%`] };
}

/** The event log: its append statements (with and without the fan-out), its list and its reads. */
@Injectable()
export class EventsRepository {
  private readonly fanOuts: OutboxFanOut[] = [];

  /** Registers what fanned-out events queue in their own statement (see OutboxFanOut). */
  useFanOut(fanOut: OutboxFanOut): void {
    if (!this.fanOuts.includes(fanOut)) {
      this.fanOuts.push(fanOut);
    }
  }

  /**
   * `WITH <callerCtes>, <the event's CTEs> <select>`: a caller's own write, its event and the event's fan-out in one
   * prepared statement named `name`; the caller's parameters are already in `params`, the event's (and its
   * fan-outs') are added after them, so `params.values` is the statement's. Without a registered fan-out (the CLI) the
   * event is written alone, under a name of its own. `shape` adds a check, the event's data as an expression, or
   * output columns (EventStatementShape); the statement answers `deliveries` first.
   */
  statement(
    name: string,
    params: SqlParams,
    record: EventRecord,
    callerCtes: string | null = null,
    shape: EventStatementShape = {},
  ): PreparedStatement {
    return this.build(this.fanOuts, name, params, record, callerCtes, shape);
  }

  /**
   * Writes the event, with its fan-outs unless `fanOut` is false (a webhook test ping, addressed to one endpoint by
   * its caller); answers the number of rows they queued.
   */
  async append(manager: EntityManager, record: EventRecord, fanOut: boolean): Promise<number> {
    const params = new SqlParams();
    const statement = this.build(fanOut ? this.fanOuts : [], 'event_append', params, record, null, {});
    const rows = await preparedQuery<{ deliveries: number }>(manager, statement, params.values);
    return rows[0].deliveries;
  }

  /**
   * The statement's text is built on each call, as its parameters are added; it is the same text for the same name
   * every time (its shape depends on which fan-outs apply, whose tags the name carries, never on the values), so a
   * connection prepares it once.
   */
  private build(
    fanOuts: readonly OutboxFanOut[],
    name: string,
    params: SqlParams,
    record: EventRecord,
    callerCtes: string | null,
    shape: EventStatementShape,
  ): PreparedStatement {
    const applying = fanOuts.filter((fanOut) => fanOut.appliesTo(record));
    const ctes = eventCtes(applying, record, params, shape.data);
    const all = callerCtes ? `${callerCtes}, ${ctes.sql}` : ctes.sql;
    const columns = shape.columns ? `, ${shape.columns}` : '';
    const select =
      shape.check || columns
        ? `SELECT queued.deliveries${columns} FROM (${ctes.select}) AS queued` +
          (shape.check ? ` WHERE ${shape.check}` : '')
        : ctes.select;
    // A connection keeps each name's text: the statement without a fan-out is named apart.
    const tags = applying.map((fanOut) => fanOut.tag).filter((tag) => tag !== '');
    const named = applying.length === 0 ? `${name}_alone` : [name, ...tags].join('_');
    return { name: named, text: `WITH ${all} ${select}` };
  }

  /**
   * Writes many events, and their fan-outs, in one statement (a bill run's batch): the rows travel as one JSON
   * parameter, and each distinct `data` once in a second one (an invoice's invoice.created, invoice.finalized and
   * invoice.paid carry the same document: sent once, stored in each event as before). Answers the number of rows the
   * fan-outs queued.
   */
  async appendMany(manager: EntityManager, records: EventRecord[]): Promise<number> {
    if (records.length === 0) {
      return 0;
    }
    const params = new SqlParams();
    return this.writeMany(manager, this.manyStatement(params, records, []), params);
  }

  /** Runs a manyStatement; answers the number of rows its fan-outs queued. */
  async writeMany(manager: EntityManager, sql: string, params: SqlParams): Promise<number> {
    const [result]: { deliveries: number }[] = await manager.query(sql, params.values);
    return result.deliveries;
  }

  /**
   * appendMany's statement with a caller's own writes in it: `WITH <callerCtes>, <the events' CTEs> SELECT
   * deliveries`, the caller's parameters already in `params` and the events' JSON added after them, so the caller's
   * change, its events and what they queue are one round trip (the caller runs it: `manager.query(sql,
   * params.values)`). The caller's CTE names must not be `input`, `event` or a fan-out's.
   */
  manyStatement(params: SqlParams, records: EventRecord[], callerCtes: readonly string[]): string {
    if (records.length === 0) {
      return `WITH ${callerCtes.join(', ')} SELECT 0 AS deliveries`;
    }
    const applying = this.fanOuts.filter((fanOut) => records.some((record) => fanOut.appliesTo(record)));
    const extra = applying.flatMap((fanOut) => Object.entries(fanOut.rowColumns ?? {}));
    const columns = EVENT_COLUMNS.map((column) => column.column);
    const types: Record<string, string> = { actor: 'jsonb', created_at: 'timestamptz' };
    const definition = [
      ...columns
        .filter((column) => column !== 'data')
        .map((column) => `${column} ${types[column] ?? 'text'}`),
      'data_index int',
      'patterns text[]',
      ...extra.map(([column]) => `${column} text`),
    ];
    const { indexOf, documents } = distinctData(records);
    const rows = records.map((record, index) => ({
      ...Object.fromEntries(
        EVENT_COLUMNS.filter((column) => column.column !== 'data').map((column) => [
          column.column,
          record[column.property],
        ]),
      ),
      data_index: indexOf[index],
      patterns: patternsFor(record.type),
      ...Object.fromEntries(extra.map(([column, value]) => [column, value(record)])),
    }));
    const json = params.add(JSON.stringify(rows), 'jsonb');
    const data = params.add(JSON.stringify(documents), 'jsonb');
    const input =
      `input AS (SELECT x.*, ${data} -> x.data_index AS data ` +
      `FROM jsonb_to_recordset(${json}) AS x(${definition.join(', ')}))`;
    const insert = `event AS (INSERT INTO events (${columns.join(', ')}) SELECT ${columns.join(', ')} FROM input)`;
    const queued = applying.map((fanOut) => fanOut.rowsCtes('input'));
    return (
      `WITH ${[...callerCtes, input, insert, ...queued.map((each) => each.sql)].join(', ')} ` +
      `SELECT ${queued.length === 0 ? '0' : queued.map((each) => each.count).join(' + ')} AS deliveries`
    );
  }

  /** A page of the tenant's events, newest first, each rendered by Postgres as EventResponseDto. */
  page(manager: EntityManager, tenantId: string, query: ListEventsQueryDto): Promise<RenderedPage> {
    const conditions: Condition[] = [{ sql: 'e.tenant_id = ?', values: [tenantId], indexed: true }];
    if (query.type) {
      const types = query.type.map((type) => typeCondition(type));
      conditions.push(
        types.length === 1
          ? types[0]
          : {
              sql: `(${types.map((type) => type.sql).join(' OR ')})`,
              values: types.flatMap((type) => type.values),
            },
      );
    }
    if (query.subject_id) {
      conditions.push({ sql: 'e.subject_id = ?', values: [query.subject_id], indexed: true });
    }
    return renderedPage(manager, EVENT_LIST, conditions, query);
  }

  /**
   * The next events after a consumer's cursor (`txId`, `eventId`), in (transaction, id) order, from transactions older
   * than every transaction still running: one that commits later has a later id than any read here, so none is passed
   * over.
   */
  async after(manager: EntityManager, txId: string, eventId: string, limit: number): Promise<LogEvent[]> {
    const rows: Record<string, unknown>[] = await manager.query(
      `SELECT tx_id, id, tenant_id, type, subject_id, data FROM events
        WHERE tx_id < (pg_snapshot_xmin(pg_current_snapshot()))::text::bigint AND (tx_id, id) > ($1::bigint, $2)
        ORDER BY tx_id, id LIMIT $3`,
      [txId, eventId, limit],
    );
    return rows.map((row) => ({
      txId: String(row.tx_id),
      id: row.id as string,
      tenantId: row.tenant_id as string,
      type: row.type as string,
      subjectId: row.subject_id as string | null,
      data: row.data as LogEvent['data'],
    }));
  }

  /**
   * Whether the log holds a status change of the subscriber after `event` (in the log's order): one still ahead of a
   * consumer, which its own event will act on.
   */
  async statusChangedAfter(manager: EntityManager, event: LogEvent, subscriberId: string): Promise<boolean> {
    const rows: unknown[] = await manager.query(
      `SELECT 1 FROM events
        WHERE tenant_id = $1 AND subject_id = $2 AND type = 'subscriber.status_changed' AND (tx_id, id) > ($3::bigint, $4)
        LIMIT 1`,
      [event.tenantId, subscriberId, event.txId, event.id],
    );
    return rows.length > 0;
  }

  /**
   * The suspension a status change ends: the subscriber's latest move into `suspended` the log holds before `event`,
   * with the reason it was suspended for; null when there is none.
   */
  async suspensionBefore(
    manager: EntityManager,
    event: LogEvent,
    subscriberId: string,
  ): Promise<{ id: string; reason: string | null } | null> {
    const rows: { id: string; reason: string | null }[] = await manager.query(
      `SELECT id, data->'object'->>'suspension_reason' AS reason FROM events
        WHERE tenant_id = $1 AND subject_id = $2 AND type = 'subscriber.status_changed'
          AND data->>'to' = 'suspended' AND (tx_id, id) < ($3::bigint, $4)
        ORDER BY tx_id DESC, id DESC LIMIT 1`,
      [event.tenantId, subscriberId, event.txId, event.id],
    );
    return rows[0] ?? null;
  }

  /**
   * The newest event of `type` about `subjectId` that `accepts` takes (any, by default), or null: read newest first, a
   * page at a time, on (tenant_id, subject_id, created_at, id). A template's preview reads the record it renders so.
   */
  async latestOf(
    manager: EntityManager,
    tenantId: string,
    type: string,
    subjectId: string,
    accepts: (event: EventRecord) => boolean = () => true,
  ): Promise<EventRecord | null> {
    const pageSize = 50;
    for (let skip = 0; ; skip += pageSize) {
      const events = await manager.find(EventRecord, {
        where: { tenantId, subjectId, type },
        order: { createdAt: 'DESC', id: 'DESC' },
        skip,
        take: pageSize,
      });
      const found = events.find(accepts);
      if (found || events.length < pageSize) {
        return found ?? null;
      }
    }
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

  /** Deletes every events row of the tenant: its test clock is deleted (docs/test-clocks.md). */
  async purgeTenant(manager: EntityManager, tenantId: string): Promise<void> {
    await manager.query('DELETE FROM events WHERE tenant_id = $1', [tenantId]);
  }
}
