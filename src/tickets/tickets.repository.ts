import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { Page } from '../common/envelope/envelope';
import { paginate, type PageQueryDto } from '../common/pagination';
import { lockForUpdate } from '../database/lock-for-update';
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

/** `%`, `_` and the escape character itself, taken literally by LIKE. */
const likeLiteral = (text: string) => text.replace(/[\\%_]/g, (char) => `\\${char}`);

/** The only place the tickets, ticket_status_changes and ticket_counters tables are read and written. */
@Injectable()
export class TicketsRepository {
  async insert(manager: EntityManager, ticket: Ticket): Promise<void> {
    await manager.insert(Ticket, ticket);
  }

  /** The tenant's next ticket number, under the counter row's lock until commit: numbers never repeat or skip. */
  async nextNumber(manager: EntityManager, tenantId: string): Promise<number> {
    const rows: { last_number: number }[] = await manager.query(
      `INSERT INTO ticket_counters (tenant_id, last_number) VALUES ($1, 1)
       ON CONFLICT (tenant_id) DO UPDATE SET last_number = ticket_counters.last_number + 1
       RETURNING last_number`,
      [tenantId],
    );
    return rows[0].last_number;
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

  /** A page of the tenant's tickets, newest first. */
  page(
    manager: EntityManager,
    tenantId: string,
    filter: TicketFilter,
    query: PageQueryDto,
  ): Promise<Page<Ticket>> {
    const qb = manager
      .getRepository(Ticket)
      .createQueryBuilder('ticket')
      .where('ticket.tenantId = :tenantId', { tenantId });
    if (filter.statuses) {
      qb.andWhere('ticket.status IN (:...statuses)', { statuses: filter.statuses });
    }
    if (filter.priorities) {
      qb.andWhere('ticket.priority IN (:...priorities)', { priorities: filter.priorities });
    }
    if (filter.types) {
      qb.andWhere('ticket.type IN (:...types)', { types: filter.types });
    }
    if (filter.subscriberId !== undefined) {
      qb.andWhere('ticket.subscriberId = :subscriberId', { subscriberId: filter.subscriberId });
    }
    if (filter.assignee !== undefined) {
      qb.andWhere('ticket.assignee = :assignee', { assignee: filter.assignee });
    }
    if (filter.tag !== undefined) {
      // Containment, which the GIN index on tags serves (`= ANY(tags)` could not use it).
      qb.andWhere('ticket.tags @> CAST(:tags AS text[])', { tags: [filter.tag] });
    }
    if (filter.overdue !== undefined) {
      const overdue = '(ticket.status NOT IN (:...stopped) AND ticket.dueAt < now())';
      qb.andWhere(filter.overdue ? overdue : `NOT ${overdue}`, { stopped: SLA_STOPPED_STATUSES });
    }
    if (filter.text !== undefined) {
      // lower(...) LIKE, which the trigram indexes on lower(subject) and lower(description) serve.
      qb.andWhere('(lower(ticket.subject) LIKE :text OR lower(ticket.description) LIKE :text)', {
        text: `%${likeLiteral(filter.text)}%`,
      });
    }
    return paginate(qb, query);
  }
}
