import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Auth, RequireScopes } from '../common/auth/auth.decorators';
import { Page } from '../common/envelope/envelope';
import type { AuthContext } from '../common/request-context';
import { ApiEnvelope, ApiErrors, AUTH_ERRORS } from '../common/swagger/api-envelope';
import { ListSessionsQueryDto, SessionDto, UsageDto, UsageQueryDto } from './dto/session.dto';
import { NetworkSessionsService } from './network-sessions.service';

@ApiTags('Network')
@ApiBearerAuth()
@Controller('api/v1/services')
export class NetworkSessionsController {
  constructor(private readonly sessions: NetworkSessionsService) {}

  @Get(':id/sessions')
  @RequireScopes('provisioning:read')
  @ApiOperation({
    summary: "List a service's sessions, newest first",
    description:
      'From RADIUS accounting (radacct, written by FreeRADIUS from the NAS): online or not, when, where, and the ' +
      'octets counted. `created_gte`/`created_lt` filter on the start.',
  })
  @ApiEnvelope(SessionDto, { list: true })
  @ApiErrors(...AUTH_ERRORS, 'invalid_query', 'invalid_cursor', 'not_found')
  listServiceSessions(
    @Auth() auth: AuthContext,
    @Param('id') id: string,
    @Query() query: ListSessionsQueryDto,
  ): Promise<Page<SessionDto>> {
    return this.sessions.sessions(auth.tenantId, id, query);
  }

  @Get(':id/usage')
  @RequireScopes('provisioning:read')
  @ApiOperation({
    summary: "A service's traffic per UTC day",
    description:
      'Every day of [from, to] (at most 366), with what the accounting packets of that day added to its sessions; a ' +
      'session that spans midnight counts on both days.',
  })
  @ApiEnvelope(UsageDto)
  @ApiErrors(...AUTH_ERRORS, 'invalid_query', 'not_found')
  getServiceUsage(
    @Auth() auth: AuthContext,
    @Param('id') id: string,
    @Query() query: UsageQueryDto,
  ): Promise<UsageDto> {
    return this.sessions.usage(auth.tenantId, id, query);
  }
}
