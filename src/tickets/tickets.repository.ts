import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import type { RenderedPage } from '../common/envelope/envelope';
import { type PageQueryDto } from '../common/pagination';
import {
  type Condition,
  conditionsSql,
  isoTimestampSql,
  type RenderedList,
  renderedPage,
} from '../database/rendered-page';
import { rankedPage, type RankedSearch } from '../database/ranked-page';
import { SqlParams } from '../database/sql-params';
import { lockForUpdate } from '../database/lock-for-update';
import { preparedQuery } from '../database/prepared-query';
import { EventsRepository, type EventRecord } from '../events';
import { SLA_STOPPED_STATUSES, TicketPriority, TicketStatus, TicketType } from './ticket-status';
import { Ticket, TicketStatusChange } from './ticket.entity';

/** Filters of the ticket lists; every one is served by an index (docs/tickets.md). */
export interface TicketFilter {
  statuses?: TicketStatus[];
  priorities?: TicketPriority[];
  types?: TicketType[];
  subscriberId?: string;
  assignee?: string;
  tag?: string;
  overdue?: boolean;
  /** Lower-cased text to find in the subject or the description. */
  text?: string;
}

/** Whether a ticket missed its SLA (isOverdue), at the statement's time. */
const OVERDUE = `(t.status NOT IN (${SLA_STOPPED_STATUSES.map((status) => `'${status}'`).join(', ')}) AND t.due_at < now())`;

/**
 * The list, each item TicketDto.from as Postgres renders it, field for field (test/api/list-rendering.e2e-spec.ts holds
 * the two to the same answer).
 */
const TICKET_LIST: RenderedList = {
  name: 'tickets_page',
  table: 'tickets',
  alias: 't',
  item: `json_build_object(
    'id', t.id, 'number', t.number, 'subject', t.subject, 'description', t.description, 'type', t.type,
    'priority', t.priority, 'status', t.status, 'subscriber_id', t.subscriber_id, 'assignee', t.assignee,
    'tags', t.tags, 'external_id', t.external_id, 'metadata', t.metadata, 'due_at', ${isoTimestampSql('t.due_at')},
    'overdue', ${OVERDUE}, 'first_response_at', ${isoTimestampSql('t.first_response_at')},
    'resolved_at', ${isoTimestampSql('t.resolved_at')}, 'closed_at', ${isoTimestampSql('t.closed_at')},
    'created_at', ${isoTimestampSql('t.created_at')}, 'updated_at', ${isoTimestampSql('t.updated_at')})`,
};

/** `%`, `_` and the escape character itself, taken literally by LIKE. */
const likeLiteral = (text: string) => text.replace(/[\\%_]/g, (char) => `\\${char}`);

/**
 * The tickets matching `conditions` (the search's among them), ranked for `text` (already lower-cased): 1000 ×
 * word_similarity with the subject plus 100 × with the description (docs/decisions.md, "Search").
 */
function rankedTickets(tenantId: string, text: string, conditions: Condition[]): RankedSearch {
  const params = new SqlParams();
  const q = params.add(text, 'text');
  const where = conditionsSql(params, conditions);
  const ranked =
    `SELECT t.id, (round(1000 * word_similarity(${q}, lower(t.subject))) ` +
    `+ round(100 * word_similarity(${q}, coalesce(lower(t.description), ''))))::int AS rank ` +
    `FROM tickets t WHERE ${where}`;
  return { ranked, params, tenantId };
}

/** The only place the tickets, ticket_status_changes and ticket_counters tables are read and written. */
@Injectable()
export class TicketsRepository {
  constructor(private readonly events: EventsRepository) {}

  /**
   * Writes a new ticket with the tenant's next number, its first status change and `ticket.created` (with what the
   * event queues: the outbox) in one prepared statement; `event`'s object takes the number the statement assigns.
   * The counter's upsert takes the row lock that serialises the tenant's creates until the statement's transaction
   * ends (numbers never repeat or skip): outside a transaction of the caller's, that is this statement alone, so
   * everything the create reads comes before it. Answers the number and how many deliveries were queued.
   */
  async insertNumbered(
    manager: EntityManager,
    ticket: Omit<Ticket, 'number'>,
    change: TicketStatusChange,
    event: EventRecord,
  ): Promise<{ number: number; deliveries: number }> {
    const params = new SqlParams();
    const tenant = params.add(ticket.tenantId);
    const id = params.add(ticket.id);
    const ctes =
      `counter AS (INSERT INTO ticket_counters (tenant_id, last_number) VALUES (${tenant}, 1) ` +
      `ON CONFLICT (tenant_id) DO UPDATE SET last_number = ticket_counters.last_number + 1 RETURNING last_number), ` +
      `ticket AS (INSERT INTO tickets (tenant_id, id, number, subject, description, type, priority, status, ` +
      `subscriber_id, assignee, tags, external_id, metadata, due_at, first_response_at, resolved_at, closed_at, ` +
      `created_at, updated_at) SELECT ${tenant}, ${id}, counter.last_number, ${params.list([
        ticket.subject,
        ticket.description,
        ticket.type,
        ticket.priority,
        ticket.status,
        ticket.subscriberId,
        ticket.assignee,
      ])}, ${params.add(ticket.tags, 'text[]')}, ${params.add(ticket.externalId)}, ` +
      `${params.add(JSON.stringify(ticket.metadata), 'jsonb')}, ${params.list([
        ticket.dueAt,
        ticket.firstResponseAt,
        ticket.resolvedAt,
        ticket.closedAt,
        ticket.createdAt,
        ticket.updatedAt,
      ])} FROM counter RETURNING number), ` +
      `history AS (INSERT INTO ticket_status_changes (tenant_id, id, ticket_id, from_status, to_status, reason, ` +
      `actor, created_at) SELECT ${tenant}, ${params.add(change.id)}, ${id}, ` +
      `${params.list([change.fromStatus, change.toStatus, change.reason])}, ` +
      `${params.add(JSON.stringify(change.actor), 'jsonb')}, ${params.add(change.createdAt)} FROM ticket)`;
    const statement = this.events.statement('ticket_create', params, event, ctes, {
      data: (data) => `jsonb_set(${data}::jsonb, '{object,number}', (SELECT to_jsonb(number) FROM ticket))`,
      columns: '(SELECT number FROM ticket) AS number',
    });
    const rows = await preparedQuery<{ deliveries: number; number: number }>(
      manager,
      statement,
      params.values,
    );
    return { number: rows[0].number, deliveries: rows[0].deliveries };
  }

  findById(manager: EntityManager, tenantId: string, id: string): Promise<Ticket | null> {
    return manager.findOne(Ticket, { where: { tenantId, id } });
  }

  /** The tenant's ticket, row-locked until the transaction ends; 404 not_found when there is none. */
  lockForUpdate(manager: EntityManager, tenantId: string, id: string): Promise<Ticket> {
    return lockForUpdate(manager, Ticket, tenantId, id, 'ticket');
  }

  /** Writes every column but the key, the number and created_at. */
  async update(manager: EntityManager, ticket: Ticket): Promise<void> {
    const changes: Partial<Ticket> = { ...ticket };
    for (const fixed of ['tenantId', 'id', 'number', 'createdAt'] as const) {
      delete changes[fixed];
    }
    await manager.update(Ticket, { tenantId: ticket.tenantId, id: ticket.id }, changes);
  }

  async insertStatusChange(manager: EntityManager, change: TicketStatusChange): Promise<void> {
    await manager.insert(TicketStatusChange, change);
  }

  /** The ticket's status history, oldest first. */
  history(manager: EntityManager, tenantId: string, ticketId: string): Promise<TicketStatusChange[]> {
    return manager.find(TicketStatusChange, {
      where: { tenantId, ticketId },
      order: { createdAt: 'ASC', id: 'ASC' },
    });
  }

  /** A page of the tenant's tickets, newest first, each rendered by Postgres as TicketDto. */
  page(
    manager: EntityManager,
    tenantId: string,
    filter: TicketFilter,
    query: PageQueryDto,
  ): Promise<RenderedPage> {
    const conditions: Condition[] = [{ sql: 't.tenant_id = ?', values: [tenantId], indexed: true }];
    if (filter.statuses) {
      conditions.push({ sql: 't.status = ANY(?)', values: [filter.statuses] });
    }
    if (filter.priorities) {
      conditions.push({ sql: 't.priority = ANY(?)', values: [filter.priorities] });
    }
    if (filter.types) {
      conditions.push({ sql: 't.type = ANY(?)', values: [filter.types] });
    }
    if (filter.subscriberId !== undefined) {
      conditions.push({ sql: 't.subscriber_id = ?', values: [filter.subscriberId] });
    }
    if (filter.assignee !== undefined) {
      conditions.push({ sql: 't.assignee = ?', values: [filter.assignee] });
    }
    if (filter.tag !== undefined) {
      // Containment, which the GIN index on tags serves (`= ANY(tags)` could not use it).
      conditions.push({ sql: 't.tags @> CAST(? AS text[])', values: [[filter.tag]] });
    }
    if (filter.overdue !== undefined) {
      conditions.push({ sql: filter.overdue ? OVERDUE : `NOT ${OVERDUE}`, values: [] });
    }
    if (filter.text === undefined) {
      return renderedPage(manager, TICKET_LIST, conditions, query);
    }
    // lower(...) LIKE, which the trigram indexes on lower(subject) and lower(description) serve.
    const pattern = `%${likeLiteral(filter.text)}%`;
    conditions.push({
      sql: '(lower(t.subject) LIKE ? OR lower(t.description) LIKE ?)',
      values: [pattern, pattern],
    });
    for (const [column, value] of [
      ['t.created_at >= ?', query.created_gte],
      ['t.created_at < ?', query.created_lt],
    ] as const) {
      if (value) {
        conditions.push({ sql: column, values: [new Date(value)] });
      }
    }
    return rankedPage(manager, TICKET_LIST, rankedTickets(tenantId, filter.text, conditions), query);
  }

  /** Deletes every row of the tenant in ticket_status_changes, tickets, ticket_counters, in that order: its test clock is deleted (docs/test-clocks.md). */
  async purgeTenant(manager: EntityManager, tenantId: string): Promise<void> {
    for (const table of ['ticket_status_changes', 'tickets', 'ticket_counters']) {
      await manager.query(`DELETE FROM ${table} WHERE tenant_id = $1`, [tenantId]);
    }
  }
}
