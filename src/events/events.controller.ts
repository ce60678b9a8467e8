import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { RenderedPage } from '../common/envelope/envelope';
import { ApiEnvelope, ApiErrors, AUTH_ERRORS } from '../common/swagger/api-envelope';
import type { AuthContext } from '../common/request-context';
import { Auth, RequireScopes } from '../common/auth/auth.decorators';
import { EventResponseDto } from './dto/event-response.dto';
import { ListEventsQueryDto } from './dto/list-events-query.dto';
import { EventsService } from './events.service';

@ApiTags('Events')
@ApiBearerAuth()
@Controller('api/v1/events')
export class EventsController {
  constructor(private readonly events: EventsService) {}

  @Get()
  @RequireScopes('events:read')
  @ApiOperation({
    description:
      'Reads the audit log: every change to a record, who made it and the record after it, newest first. Filter by type or subject, and page with `starting_after`; events are kept, never changed.',
    summary: 'List the audit and automation event log, newest first',
  })
  @ApiEnvelope(EventResponseDto, { list: true })
  @ApiErrors(...AUTH_ERRORS, 'invalid_query', 'invalid_cursor')
  async listEvents(@Auth() auth: AuthContext, @Query() query: ListEventsQueryDto): Promise<RenderedPage> {
    return this.events.list(auth.tenantId, query);
  }

  @Get(':id')
  @RequireScopes('events:read')
  @ApiOperation({
    description:
      'Returns one event of the audit log, with the record as it was after that change. 404 `not_found` for an id outside the tenant.',
    summary: 'Get one event',
  })
  @ApiEnvelope(EventResponseDto)
  @ApiErrors(...AUTH_ERRORS, 'not_found')
  async getEvent(@Auth() auth: AuthContext, @Param('id') id: string): Promise<EventResponseDto> {
    return EventResponseDto.from(await this.events.getById(auth.tenantId, id));
  }
}
