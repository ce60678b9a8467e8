import { newId } from '../common/ids';
import type { WriteScope } from '../common/request-context';
import type { PreparedStatement } from '../database/prepared-query';
import { EventRecord } from './event.entity';
import type { EventType } from './event-types';

export interface NewEvent {
  tenantId: string;
  /** Typed by the catalogue, so a type cannot be emitted without being listed there. */
  type: EventType;
  subjectId: string | null;
  object: object;
  /** Extra keys beside `object` in `data`, e.g. `changed_fields` or `{from, to, reason}`. */
  details?: Record<string, unknown>;
}

/** The patterns a webhook subscribes with that match an event type: itself, each dotted prefix with `.*`, and `*`. */
export function patternsFor(type: string): string[] {
  const parts = type.split('.');
  const prefixes = parts.slice(0, -1).map((_, index) => `${parts.slice(0, index + 1).join('.')}.*`);
  return [type, ...prefixes, '*'];
}

/** The event as it will be stored; the scope names the request and the actor behind it. */
export function eventRecord(event: NewEvent, scope: WriteScope): EventRecord {
  return Object.assign(new EventRecord(), {
    id: newId('evt'),
    tenantId: event.tenantId,
    type: event.type,
    subjectId: event.subjectId,
    data: { object: event.object, ...event.details },
    requestId: scope.requestId,
    actor: scope.actor,
    createdAt: new Date(),
  });
}

/** Common table expressions that write an event and, with `fanOut`, its webhook deliveries. */
export interface EventCtes {
  /** `event AS (…), deliveries AS (…)`, to follow `WITH` (and any CTEs of the caller's own, comma-separated). */
  sql: string;
  /** Selects the number of deliveries queued, as `deliveries`. */
  select: string;
}

/**
 * The event log is the transactional outbox: the event and one pending delivery per enabled webhook subscribed to
 * its type are written by one statement, so they commit together, with the change the caller writes beside them,
 * and cost one round trip. Parameters (eventParams) are numbered from `$<firstParam>`, after the caller's own.
 * A delivery is due at the database's now(), the clock every claim and lease uses, not at this instance's.
 */
export function eventCtes(fanOut: boolean, firstParam = 1): EventCtes {
  const [tenant, id, type, subject, data, requestId, actor, at, patterns] = Array.from(
    { length: 9 },
    (_, index) => `$${firstParam + index}`,
  );
  const event =
    'event AS (INSERT INTO events (tenant_id, id, type, subject_id, data, request_id, actor, created_at) ' +
    `VALUES (${tenant}, ${id}, ${type}, ${subject}, ${data}, ${requestId}, ${actor}, ${at}))`;
  if (!fanOut) return { sql: event, select: 'SELECT 0 AS deliveries' };
  const deliveries =
    'deliveries AS (INSERT INTO webhook_deliveries (tenant_id, id, webhook_id, event_id, event_type, status, ' +
    'attempts, next_attempt_at, locked_until, created_at, updated_at) ' +
    `SELECT ${tenant}, isp_new_id('dlv', ${at}), webhook.id, ${id}, ${type}, 'pending', 0, now(), NULL, ${at}, ${at} ` +
    `FROM webhooks webhook WHERE webhook.tenant_id = ${tenant} AND webhook.enabled ` +
    `AND webhook.events && ${patterns}::text[] RETURNING 1)`;
  return { sql: `${event}, ${deliveries}`, select: 'SELECT count(*)::int AS deliveries FROM deliveries' };
}

/** The parameters of eventCtes, in its order. */
export function eventParams(record: EventRecord, fanOut: boolean): unknown[] {
  const params: unknown[] = [
    record.tenantId,
    record.id,
    record.type,
    record.subjectId,
    record.data,
    record.requestId,
    record.actor,
    record.createdAt,
  ];
  return fanOut ? [...params, patternsFor(record.type)] : params;
}

function appendStatement(name: string, fanOut: boolean): PreparedStatement {
  const ctes = eventCtes(fanOut);
  return { name, text: `WITH ${ctes.sql} ${ctes.select}` };
}

/** An event and its deliveries; an event alone (a test ping, addressed to one endpoint by its caller). */
export const APPEND_EVENT = {
  fannedOut: appendStatement('event_append', true),
  alone: appendStatement('event_append_alone', false),
};

/** An `events` row as `pg` returns it. */
export interface EventRow {
  tenant_id: string;
  id: string;
  type: string;
  subject_id: string | null;
  data: EventRecord['data'];
  request_id: string | null;
  actor: EventRecord['actor'];
  created_at: Date;
}

export function eventFromRow(row: EventRow): EventRecord {
  return Object.assign(new EventRecord(), {
    tenantId: row.tenant_id,
    id: row.id,
    type: row.type,
    subjectId: row.subject_id,
    data: row.data,
    requestId: row.request_id,
    actor: row.actor,
    createdAt: row.created_at,
  });
}
