// The tickets domain's public surface: other modules import tickets only from here (docs/architecture.md).
// Entities first: a domain whose entity references a ticket may be loaded while this file is still loading.
export { Ticket, TicketComment, TicketCounter, TicketSettings, TicketStatusChange } from './ticket.entity';
export {
  TicketStatus,
  TicketType,
  TicketPriority,
  CommentAuthorType,
  TICKET_STATUSES,
  TICKET_TYPES,
  TICKET_PRIORITIES,
} from './ticket-status';
export { CreateTicketDto } from './dto/create-ticket.dto';
export { TicketDto, TicketDetailDto } from './dto/ticket-response.dto';
export { TicketsService } from './tickets.service';
export { TicketsPurge } from './tickets-purge';
export { TicketsModule } from './tickets.module';
