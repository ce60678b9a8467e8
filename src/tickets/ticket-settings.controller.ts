import { Body, Controller, Get, Patch } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Auth, RequireScopes } from '../common/auth/auth.decorators';
import type { AuthContext } from '../common/request-context';
import { ApiEnvelope, ApiErrors, AUTH_ERRORS, BODY_ERRORS } from '../common/swagger/api-envelope';
import { ApiExampleBody } from '../common/swagger/api-types';
import { TicketSettingsDto, UpdateTicketSettingsDto } from './dto/ticket-settings.dto';
import { TicketSettingsService } from './ticket-settings.service';

@ApiTags('Tickets')
@ApiBearerAuth()
@Controller('api/v1/ticket-settings')
export class TicketSettingsController {
  constructor(private readonly settings: TicketSettingsService) {}

  @Get()
  @RequireScopes('tickets:read')
  @ApiOperation({
    description:
      "Returns the tenant's support SLA: how many hours after it opens a ticket of each priority is due. Tenants that never changed it get the defaults.",
    summary: "The tenant's SLA: hours to due_at per priority",
  })
  @ApiEnvelope(TicketSettingsDto)
  @ApiErrors(...AUTH_ERRORS)
  async getTicketSettings(@Auth() auth: AuthContext): Promise<TicketSettingsDto> {
    return this.settings.get(auth.tenantId);
  }

  @Patch()
  @RequireScopes('tickets:write')
  @ApiOperation({
    summary: 'Change the SLA hours of one or more priorities',
    description:
      'Applies to tickets opened afterwards and to a ticket whose priority changes; due_at of other tickets stays.',
  })
  @ApiEnvelope(TicketSettingsDto)
  @ApiErrors(...AUTH_ERRORS, ...BODY_ERRORS)
  @ApiExampleBody(UpdateTicketSettingsDto, { due_hours: { urgent: 2, high: 12 } })
  async updateTicketSettings(
    @Auth() auth: AuthContext,
    @Body() dto: UpdateTicketSettingsDto,
  ): Promise<TicketSettingsDto> {
    return this.settings.update(auth, dto);
  }
}
