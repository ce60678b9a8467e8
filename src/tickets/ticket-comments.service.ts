import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Clock } from '../common/clock';
import { Page } from '../common/envelope/envelope';
import { ApiError } from '../common/errors/api-error';
import { assertIfMatch } from '../common/http/etag';
import { newId } from '../common/ids';
import type { AuthContext } from '../common/request-context';
import { TransactionRunner, type Tx } from '../database/transaction-runner';
import { EventsService } from '../events';
import { CreateCommentDto } from './dto/create-comment.dto';
import { ListCommentsQueryDto } from './dto/list-tickets-query.dto';
import { CommentDto, TicketDetailDto } from './dto/ticket-response.dto';
import { TicketCommentsRepository } from './ticket-comments.repository';
import { AGENT_REPLIED, CommentAuthorType, CUSTOMER_REPLIED, TicketStatus } from './ticket-status';
import { Ticket, TicketComment } from './ticket.entity';
import { TicketsRepository } from './tickets.repository';
import { assertEditable, TicketsService } from './tickets.service';

/** Where a public comment moves its ticket: the customer answering what the help desk waits on, or a first reply. */
export function statusAfterComment(
  ticket: Ticket,
  comment: TicketComment,
): { to: TicketStatus; reason: string } | null {
  if (!comment.public) {
    return null;
  }
  const customerWaitedOn = [TicketStatus.PendingCustomer, TicketStatus.Resolved].includes(ticket.status);
  if (comment.authorType === CommentAuthorType.Subscriber && customerWaitedOn) {
    return { to: TicketStatus.Open, reason: CUSTOMER_REPLIED };
  }
  if (comment.authorType === CommentAuthorType.Agent && ticket.status === TicketStatus.New) {
    return { to: TicketStatus.Open, reason: AGENT_REPLIED };
  }
  return null;
}

@Injectable()
export class TicketCommentsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly transactionRunner: TransactionRunner,
    private readonly events: EventsService,
    private readonly tickets: TicketsRepository,
    private readonly comments: TicketCommentsRepository,
    private readonly ticketsService: TicketsService,
    private readonly clock: Clock,
  ) {}

  /** The comment, its effect on the ticket (reopen, first response) and their events, in one transaction. */
  add(auth: AuthContext, ticketId: string, dto: CreateCommentDto): Promise<CommentDto> {
    if (dto.author_type === CommentAuthorType.Subscriber && !dto.public) {
      throw new ApiError(
        'validation_failed',
        "A subscriber's comment is public: public must be true.",
        'public',
      );
    }
    const { tenantId } = auth;
    return this.transactionRunner.run(auth, async (tx) => {
      const ticket = await this.tickets.lockForUpdate(tx.manager, tenantId, ticketId);
      // A comment can move the ticket (a reply reopens it): If-Match names the ticket, as GET /tickets/{id} shows it.
      await assertIfMatch(async () =>
        TicketDetailDto.withHistory(
          ticket,
          await this.tickets.history(tx.manager, tenantId, ticketId),
          this.clock.now(),
        ),
      );
      assertEditable(ticket);
      const createdAt = this.clock.now();
      const comment = Object.assign(new TicketComment(), {
        tenantId,
        id: newId('tcm', createdAt),
        ticketId,
        body: dto.body,
        public: dto.public,
        author: dto.author ?? null,
        authorType: dto.author_type,
        createdAt,
      });
      await this.comments.insert(tx.manager, comment);
      await this.events.append(tx, {
        tenantId,
        type: 'ticket.comment_added',
        subjectId: ticketId,
        object: CommentDto.forEvent(comment),
      });
      await this.applyToTicket(tx, ticket, comment);
      return CommentDto.from(comment);
    });
  }

  async list(tenantId: string, ticketId: string, query: ListCommentsQueryDto): Promise<Page<CommentDto>> {
    const manager = this.dataSource.manager;
    if (!(await this.tickets.findById(manager, tenantId, ticketId))) {
      throw ApiError.notFound('ticket', ticketId);
    }
    const visibility = { public: query.public === undefined ? undefined : query.public === 'true' };
    return (await this.comments.page(manager, tenantId, ticketId, visibility, query)).map(CommentDto.from);
  }

  private async applyToTicket(tx: Tx, ticket: Ticket, comment: TicketComment): Promise<void> {
    const firstResponse =
      comment.public && comment.authorType === CommentAuthorType.Agent && ticket.firstResponseAt === null;
    if (firstResponse) {
      ticket.firstResponseAt = comment.createdAt;
    }
    const move = statusAfterComment(ticket, comment);
    if (move) {
      await this.ticketsService.moveTo(tx, ticket, move.to, move.reason);
    } else if (firstResponse) {
      ticket.updatedAt = comment.createdAt;
      await this.tickets.update(tx.manager, ticket);
    }
  }
}
