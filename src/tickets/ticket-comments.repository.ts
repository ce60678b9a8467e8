import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { Page } from '../common/envelope/envelope';
import { paginate, type PageQueryDto } from '../common/pagination';
import { TicketComment } from './ticket.entity';

/** The only place the ticket_comments table is read and written. */
@Injectable()
export class TicketCommentsRepository {
  async insert(manager: EntityManager, comment: TicketComment): Promise<void> {
    await manager.insert(TicketComment, comment);
  }

  /** A page of the ticket's comments, oldest first (the order a conversation is read in). */
  page(
    manager: EntityManager,
    tenantId: string,
    ticketId: string,
    visibility: { public?: boolean },
    query: PageQueryDto,
  ): Promise<Page<TicketComment>> {
    const qb = manager
      .getRepository(TicketComment)
      .createQueryBuilder('comment')
      .where('comment.tenantId = :tenantId AND comment.ticketId = :ticketId', { tenantId, ticketId });
    if (visibility.public !== undefined) {
      qb.andWhere('comment.public = :public', { public: visibility.public });
    }
    return paginate(qb, query, 'oldest');
  }

  /** Deletes every ticket_comments row of the tenant: its test clock is deleted (docs/test-clocks.md). */
  async purgeTenant(manager: EntityManager, tenantId: string): Promise<void> {
    await manager.query('DELETE FROM ticket_comments WHERE tenant_id = $1', [tenantId]);
  }
}
