import { Injectable } from '@nestjs/common';
import { assertIfMatch } from '../common/http/etag';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Clock } from '../common/clock';
import { RenderedPage } from '../common/envelope/envelope';
import { ApiError } from '../common/errors/api-error';
import { isForeignKeyViolation, isUniqueViolation } from '../common/errors/postgres-errors';
import { newId } from '../common/ids';
import { mergeMetadata } from '../common/metadata';
import type { AuthContext } from '../common/request-context';
import { Tx, TransactionRunner } from '../database/transaction-runner';
import { eventRecord, EventsService } from '../events';
import { SubscribersService } from '../subscribers';
import { ChangeTicketStatusDto } from './dto/change-ticket-status.dto';
import { CreateTicketDto } from './dto/create-ticket.dto';
import { ListTicketsQueryDto } from './dto/list-tickets-query.dto';
import { normalizeTags } from './dto/ticket-fields';
import { TicketDetailDto, TicketDto } from './dto/ticket-response.dto';
import { UpdateTicketDto } from './dto/update-ticket.dto';
import { TicketSettingsService } from './ticket-settings.service';
import { assertTransition, FINAL_STATUSES, REASON_REQUIRED, TicketStatus } from './ticket-status';
import { Ticket, TicketStatusChange } from './ticket.entity';
import { TicketsRepository, type TicketFilter } from './tickets.repository';

/** The database's verdicts as the API's answers. */
function writeError(error: unknown, subscriberId?: string): ApiError | null {
  if (isForeignKeyViolation(error, 'fk_tickets_subscriber')) {
    return new ApiError('invalid_reference', `No subscriber ${subscriberId} exists.`, 'subscriber_id');
  }
  if (isUniqueViolation(error, 'uq_tickets_external_id')) {
    return new ApiError(
      'duplicate_ticket',
      'A ticket with the supplied external_id already exists.',
      'external_id',
    );
  }
  return null;
}

/** 409 ticket_closed on a ticket in a final state: it takes no edits and no comments. */
export function assertEditable(ticket: Ticket): void {
  if (FINAL_STATUSES.includes(ticket.status)) {
    throw new ApiError(
      'ticket_closed',
      `Ticket ${ticket.id} is ${ticket.status}: it can no longer be changed or commented on.`,
      'status',
    );
  }
}

@Injectable()
export class TicketsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly transactionRunner: TransactionRunner,
    private readonly events: EventsService,
    private readonly tickets: TicketsRepository,
    private readonly settings: TicketSettingsService,
    private readonly subscribers: SubscribersService,
    private readonly clock: Clock,
  ) {}

  /**
   * The ticket, its number, its first history entry and `ticket.created`: one statement after the SLA's read, so the
   * tenant's counter row is locked for that statement alone. With an idempotency key to claim, a transaction: the
   * answer stored with the key carries the number, which only the statement knows.
   */
  async create(auth: AuthContext, dto: CreateTicketDto): Promise<TicketDetailDto> {
    const work = (tx: Tx) => this.createIn(tx, auth.tenantId, dto);
    try {
      return await (auth.idempotency?.claimed === false
        ? this.transactionRunner.run(auth, work)
        : this.transactionRunner.runStatement(auth, work));
    } catch (error) {
      throw writeError(error, dto.subscriber_id) ?? error;
    }
  }

  /** A new ticket in the caller's transaction (an automation rule's). */
  async createIn(tx: Tx, tenantId: string, dto: CreateTicketDto): Promise<TicketDetailDto> {
    const createdAt = this.clock.now();
    const fields = {
      tenantId,
      id: newId('tkt', createdAt),
      subject: dto.subject,
      description: dto.description ?? null,
      type: dto.type,
      priority: dto.priority,
      status: TicketStatus.New,
      subscriberId: dto.subscriber_id ?? null,
      assignee: dto.assignee ?? null,
      tags: normalizeTags(dto.tags ?? []),
      externalId: dto.external_id ?? null,
      metadata: dto.metadata ?? {},
      dueAt: await this.settings.dueAt(tx.manager, tenantId, dto.priority, createdAt),
      firstResponseAt: null,
      resolvedAt: null,
      closedAt: null,
      createdAt,
      updatedAt: createdAt,
    };
    const created = this.statusChange(tx, fields, null, null);
    // The event's object takes its number in the statement that assigns it (0 until then).
    const event = eventRecord(
      {
        tenantId,
        type: 'ticket.created',
        subjectId: fields.id,
        object: TicketDto.from(Object.assign(new Ticket(), { ...fields, number: 0 }), createdAt),
      },
      tx.scope,
      createdAt,
    );
    // The number last: its counter row stays locked until the statement commits (docs/tickets.md, "Concurrency").
    const { number, deliveries } = await this.tickets.insertNumbered(tx.manager, fields, created, event);
    this.events.queued(tx, deliveries);
    const ticket = Object.assign(new Ticket(), { ...fields, number });
    return TicketDetailDto.withHistory(ticket, [created], this.clock.now());
  }

  async getDetail(tenantId: string, id: string): Promise<TicketDetailDto> {
    const manager = this.dataSource.manager;
    const ticket = await this.tickets.findById(manager, tenantId, id);
    if (!ticket) {
      throw ApiError.notFound('ticket', id);
    }
    return TicketDetailDto.withHistory(
      ticket,
      await this.tickets.history(manager, tenantId, id),
      this.clock.now(),
    );
  }

  list(tenantId: string, query: ListTicketsQueryDto): Promise<RenderedPage> {
    return this.tickets.page(this.dataSource.manager, tenantId, this.filterOf(query), query);
  }

  /** One subscriber's tickets: 404 when the subscriber is not the tenant's. */
  async listForSubscriber(
    tenantId: string,
    subscriberId: string,
    query: ListTicketsQueryDto,
  ): Promise<RenderedPage> {
    await this.subscribers.getById(tenantId, subscriberId);
    const filter = { ...this.filterOf(query), subscriberId };
    return this.tickets.page(this.dataSource.manager, tenantId, filter, query);
  }

  update(auth: AuthContext, id: string, dto: UpdateTicketDto): Promise<TicketDetailDto> {
    const { tenantId } = auth;
    return this.transactionRunner.run(auth, async (tx) => {
      const ticket = await this.tickets.lockForUpdate(tx.manager, tenantId, id);
      await assertIfMatch(async () =>
        TicketDetailDto.withHistory(
          ticket,
          await this.tickets.history(tx.manager, tenantId, id),
          this.clock.now(),
        ),
      );
      assertEditable(ticket);
      const changed = this.applyChanges(ticket, dto);
      if (changed.includes('priority')) {
        ticket.dueAt = await this.settings.dueAt(tx.manager, tenantId, ticket.priority, ticket.createdAt);
      }
      if (changed.length > 0) {
        ticket.updatedAt = this.clock.now();
        await this.tickets.update(tx.manager, ticket);
        await this.events.append(tx, {
          tenantId,
          type: 'ticket.updated',
          subjectId: ticket.id,
          object: TicketDto.from(ticket, this.clock.now()),
          details: { changed_fields: changed },
        });
      }
      return TicketDetailDto.withHistory(
        ticket,
        await this.tickets.history(tx.manager, tenantId, id),
        this.clock.now(),
      );
    });
  }

  changeStatus(auth: AuthContext, id: string, dto: ChangeTicketStatusDto): Promise<TicketDetailDto> {
    const { tenantId } = auth;
    if (REASON_REQUIRED.includes(dto.status) && (dto.reason === undefined || dto.reason === null)) {
      throw new ApiError(
        'missing_field',
        `reason is required when moving a ticket to ${dto.status}.`,
        'reason',
      );
    }
    return this.transactionRunner.run(auth, async (tx) => {
      const ticket = await this.tickets.lockForUpdate(tx.manager, tenantId, id);
      await assertIfMatch(async () =>
        TicketDetailDto.withHistory(
          ticket,
          await this.tickets.history(tx.manager, tenantId, id),
          this.clock.now(),
        ),
      );
      await this.moveTo(tx, ticket, dto.status, dto.reason ?? null);
      return TicketDetailDto.withHistory(
        ticket,
        await this.tickets.history(tx.manager, tenantId, id),
        this.clock.now(),
      );
    });
  }

  /**
   * The one function that applies the workflow (TICKET_TRANSITIONS) to a locked ticket: checks the move, keeps the
   * timestamps, writes the row, the history entry and `ticket.status_changed`. Comments move tickets through it too.
   */
  async moveTo(tx: Tx, ticket: Ticket, to: TicketStatus, reason: string | null): Promise<void> {
    const from = ticket.status;
    ticket.status = assertTransition(from, to);
    const now = this.clock.now();
    if (to === TicketStatus.Resolved) {
      ticket.resolvedAt = now;
    } else if (to !== TicketStatus.Closed) {
      ticket.resolvedAt = null;
    }
    if (to === TicketStatus.Closed) {
      ticket.closedAt = now;
    }
    ticket.updatedAt = now;
    await this.tickets.update(tx.manager, ticket);
    await this.recordStatus(tx, ticket, from, reason);
    await this.events.append(tx, {
      tenantId: ticket.tenantId,
      type: 'ticket.status_changed',
      subjectId: ticket.id,
      object: TicketDto.from(ticket, this.clock.now()),
      details: { from, to, reason },
    });
  }

  private async recordStatus(
    tx: Tx,
    ticket: Ticket,
    from: TicketStatus | null,
    reason: string | null,
  ): Promise<TicketStatusChange> {
    const change = this.statusChange(tx, ticket, from, reason);
    await this.tickets.insertStatusChange(tx.manager, change);
    return change;
  }

  /** The history row of `ticket`'s move from `from` to its status, by the transaction's actor. */
  private statusChange(
    tx: Tx,
    ticket: Omit<Ticket, 'number'>,
    from: TicketStatus | null,
    reason: string | null,
  ): TicketStatusChange {
    return Object.assign(new TicketStatusChange(), {
      tenantId: ticket.tenantId,
      id: newId('tsc', ticket.updatedAt),
      ticketId: ticket.id,
      fromStatus: from,
      toStatus: ticket.status,
      reason,
      actor: tx.scope.actor,
      createdAt: ticket.updatedAt,
    });
  }

  private filterOf(query: ListTicketsQueryDto): TicketFilter {
    return {
      statuses: query.status,
      priorities: query.priority,
      types: query.type,
      subscriberId: query.subscriber_id,
      assignee: query.assignee,
      tag: query.tag?.toLowerCase(),
      overdue: query.overdue === undefined ? undefined : query.overdue === 'true',
      text: query.q?.toLowerCase(),
    };
  }

  /** Applies a PATCH to the entity and returns the names of the fields that really changed. */
  private applyChanges(ticket: Ticket, dto: UpdateTicketDto): string[] {
    const changed: string[] = [];
    const set = <K extends keyof Ticket>(field: string, key: K, value: Ticket[K] | undefined) => {
      if (value === undefined || JSON.stringify(ticket[key]) === JSON.stringify(value)) {
        return;
      }
      ticket[key] = value;
      changed.push(field);
    };
    set('subject', 'subject', dto.subject);
    set('description', 'description', dto.description);
    set('type', 'type', dto.type);
    set('priority', 'priority', dto.priority);
    set('assignee', 'assignee', dto.assignee);
    set('tags', 'tags', dto.tags === undefined ? undefined : normalizeTags(dto.tags));
    set(
      'metadata',
      'metadata',
      dto.metadata === undefined ? undefined : mergeMetadata(ticket.metadata, dto.metadata),
    );
    return changed;
  }
}
