import { Body, Controller, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Auth, RequireScopes } from '../common/auth/auth.decorators';
import { Page, RenderedPage } from '../common/envelope/envelope';
import type { AuthContext } from '../common/request-context';
import {
  ApiEnvelope,
  ApiErrors,
  AUTH_ERRORS,
  BODY_ERRORS,
  IDEMPOTENCY_ERRORS,
} from '../common/swagger/api-envelope';
import { ApiExampleBody } from '../common/swagger/api-types';
import { ChangeTicketStatusDto } from './dto/change-ticket-status.dto';
import { CreateCommentDto } from './dto/create-comment.dto';
import { CreateTicketDto } from './dto/create-ticket.dto';
import {
  ListCommentsQueryDto,
  ListSubscriberTicketsQueryDto,
  ListTicketsQueryDto,
} from './dto/list-tickets-query.dto';
import { CommentDto, TicketDetailDto, TicketDto } from './dto/ticket-response.dto';
import { UpdateTicketDto } from './dto/update-ticket.dto';
import { TicketCommentsService } from './ticket-comments.service';
import { TicketsService } from './tickets.service';
import { HonoursIfMatch } from '../common/http/honours-if-match';

const LIST_ERRORS = [...AUTH_ERRORS, 'invalid_query', 'invalid_cursor'] as const;

@ApiTags('Tickets')
@ApiBearerAuth()
@Controller('api/v1')
export class TicketsController {
  constructor(
    private readonly tickets: TicketsService,
    private readonly comments: TicketCommentsService,
  ) {}

  @Post('tickets')
  @HttpCode(201)
  @RequireScopes('tickets:write')
  @ApiOperation({
    summary: 'Open a ticket',
    description:
      'Numbered per tenant without gaps; due_at comes from the SLA of its priority (GET /ticket-settings). ' +
      '409 duplicate_ticket when external_id exists; 422 invalid_reference when subscriber_id is not yours.',
  })
  @ApiEnvelope(TicketDetailDto, { status: 201 })
  @ApiErrors(...AUTH_ERRORS, ...BODY_ERRORS, ...IDEMPOTENCY_ERRORS, 'duplicate_ticket', 'invalid_reference')
  @ApiExampleBody(CreateTicketDto, {
    subject: 'No internet since this morning',
    description: 'The ONT shows a red LOS light; the customer already restarted it.',
    type: 'incident',
    priority: 'high',
    subscriber_id: 'sub_01JD3Z6W3R4T5Y6U7I8O9P0QAB',
    assignee: 'noc.jane',
    tags: ['fiber', 'outage'],
    external_id: 'helpdesk-48213',
    metadata: { channel: 'phone' },
  })
  async createTicket(@Auth() auth: AuthContext, @Body() dto: CreateTicketDto): Promise<TicketDetailDto> {
    return this.tickets.create(auth, dto);
  }

  @Get('tickets')
  @RequireScopes('tickets:read')
  @ApiOperation({
    description:
      "Lists support tickets, newest first, with the help desk's filters (status, priority, type, subscriber, assignee, tag, overdue, free text), paginated by cursor. Read-only.",
    summary: 'List tickets, newest first, with the help desk filters',
  })
  @ApiEnvelope(TicketDto, { list: true })
  @ApiErrors(...LIST_ERRORS)
  async listTickets(@Auth() auth: AuthContext, @Query() query: ListTicketsQueryDto): Promise<RenderedPage> {
    return this.tickets.list(auth.tenantId, query);
  }

  @Get('subscribers/:id/tickets')
  @RequireScopes('tickets:read')
  @ApiOperation({
    summary: "List a subscriber's tickets, newest first",
    description: 'The filters of GET /tickets.',
  })
  @ApiEnvelope(TicketDto, { list: true })
  @ApiErrors(...LIST_ERRORS, 'not_found')
  async listSubscriberTickets(
    @Auth() auth: AuthContext,
    @Param('id') id: string,
    @Query() query: ListSubscriberTicketsQueryDto,
  ): Promise<RenderedPage> {
    return this.tickets.listForSubscriber(auth.tenantId, id, query);
  }

  @Get('tickets/:id')
  @RequireScopes('tickets:read')
  @ApiOperation({
    description:
      "Returns one ticket with its status history (the first entry's `from` is null) and its ETag. 404 `not_found` for an unknown id.",
    summary: 'Get a ticket with its status history',
  })
  @ApiEnvelope(TicketDetailDto)
  @ApiErrors(...AUTH_ERRORS, 'not_found')
  async getTicket(@Auth() auth: AuthContext, @Param('id') id: string): Promise<TicketDetailDto> {
    return this.tickets.getDetail(auth.tenantId, id);
  }

  @Patch('tickets/:id')
  @RequireScopes('tickets:write')
  @ApiOperation({
    summary: 'Change subject, description, type, priority, assignee, tags or metadata',
    description:
      'Status moves go through POST /tickets/{id}/status. A priority change recomputes due_at from created_at. ' +
      '409 ticket_closed on a closed or cancelled ticket.',
  })
  @ApiEnvelope(TicketDetailDto)
  @ApiErrors(...AUTH_ERRORS, ...BODY_ERRORS, 'not_found', 'ticket_closed')
  @ApiExampleBody(UpdateTicketDto, {
    priority: 'urgent',
    assignee: 'noc.omar',
    tags: ['fiber', 'outage', 'street'],
  })
  @HonoursIfMatch()
  async updateTicket(
    @Auth() auth: AuthContext,
    @Param('id') id: string,
    @Body() dto: UpdateTicketDto,
  ): Promise<TicketDetailDto> {
    return this.tickets.update(auth, id, dto);
  }

  @Post('tickets/:id/status')
  @HttpCode(200)
  @RequireScopes('tickets:write')
  @ApiOperation({
    summary: 'Move a ticket through its workflow',
    description:
      'new→open; open→pending_customer|on_hold|resolved; pending_customer|on_hold→open|resolved; ' +
      'resolved→open|closed; any state but closed and cancelled→cancelled. on_hold and cancelled need a reason.',
  })
  @ApiEnvelope(TicketDetailDto)
  @ApiErrors(...AUTH_ERRORS, ...BODY_ERRORS, ...IDEMPOTENCY_ERRORS, 'not_found', 'invalid_state_transition')
  @ApiExampleBody(ChangeTicketStatusDto, { status: 'open', reason: 'Technician assigned' })
  @HonoursIfMatch()
  async changeTicketStatus(
    @Auth() auth: AuthContext,
    @Param('id') id: string,
    @Body() dto: ChangeTicketStatusDto,
  ): Promise<TicketDetailDto> {
    return this.tickets.changeStatus(auth, id, dto);
  }

  @Post('tickets/:id/comments')
  @HttpCode(201)
  @RequireScopes('tickets:write')
  @ApiOperation({
    summary: 'Comment on a ticket, publicly or internally',
    description:
      "An agent's first public comment sets first_response_at (and opens a new ticket); a subscriber's comment " +
      'reopens a pending_customer or resolved ticket. 409 ticket_closed on a closed or cancelled ticket.',
  })
  @ApiEnvelope(CommentDto, { status: 201 })
  @ApiErrors(...AUTH_ERRORS, ...BODY_ERRORS, ...IDEMPOTENCY_ERRORS, 'not_found', 'ticket_closed')
  @ApiExampleBody(CreateCommentDto, {
    body: 'A technician will visit between 14:00 and 16:00 today.',
    public: true,
    author: 'noc.jane',
    author_type: 'agent',
  })
  @HonoursIfMatch()
  async createTicketComment(
    @Auth() auth: AuthContext,
    @Param('id') id: string,
    @Body() dto: CreateCommentDto,
  ): Promise<CommentDto> {
    return this.comments.add(auth, id, dto);
  }

  @Get('tickets/:id/comments')
  @RequireScopes('tickets:read')
  @ApiOperation({
    summary: "List a ticket's comments, oldest first",
    description: '?public=true gives what a customer portal may show.',
  })
  @ApiEnvelope(CommentDto, { list: true })
  @ApiErrors(...LIST_ERRORS, 'not_found')
  async listTicketComments(
    @Auth() auth: AuthContext,
    @Param('id') id: string,
    @Query() query: ListCommentsQueryDto,
  ): Promise<Page<CommentDto>> {
    return this.comments.list(auth.tenantId, id, query);
  }
}
