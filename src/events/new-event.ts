import { newId } from '../common/ids';
import type { WriteScope } from '../common/request-context';
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

/**
 * The event as it will be stored; the scope names the request and the actor behind it, `createdAt` is the caller's
 * one Clock reading: the id's time and created_at agree, and so do the deliveries' ids made from created_at.
 */
export function eventRecord(event: NewEvent, scope: WriteScope, createdAt: Date): EventRecord {
  return Object.assign(new EventRecord(), {
    id: newId('evt', createdAt),
    tenantId: event.tenantId,
    type: event.type,
    subjectId: event.subjectId,
    data: { object: event.object, ...event.details },
    requestId: scope.requestId,
    actor: scope.actor,
    createdAt,
  });
}
