import { Body, Controller, Delete, Get, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Auth, RequireScopes } from '../common/auth/auth.decorators';
import { Page } from '../common/envelope/envelope';
import type { AuthContext } from '../common/request-context';
import {
  ApiEnvelope,
  ApiErrors,
  AUTH_ERRORS,
  BODY_ERRORS,
  IDEMPOTENCY_ERRORS,
} from '../common/swagger/api-envelope';
import { ApiExampleBody } from '../common/swagger/api-types';
import { CreateNasDto, ListNasQueryDto, NasDto, UpdateNasDto } from './dto/nas.dto';
import { NasService } from './nas.service';
import { HonoursIfMatch } from '../common/http/honours-if-match';

@ApiTags('Network')
@ApiBearerAuth()
@Controller('api/v1/nas')
export class NasController {
  constructor(private readonly nas: NasService) {}

  @Post()
  @RequireScopes('provisioning:write')
  @ApiOperation({
    summary: 'Register a NAS',
    description:
      "Written to FreeRADIUS's `nas` table, so that FreeRADIUS (which reads its clients when it starts) accepts the " +
      "router's requests; the API signs Disconnect and CoA requests to it with the secret, which is write-only.",
  })
  @ApiEnvelope(NasDto, { status: 201 })
  @ApiErrors(...AUTH_ERRORS, ...BODY_ERRORS, ...IDEMPOTENCY_ERRORS, 'duplicate_nas')
  @ApiExampleBody(CreateNasDto, {
    name: 'bng-north-1',
    ip: '192.0.2.10',
    secret: 'n4s-shared-s3cret',
    type: 'mikrotik',
    coa_port: 3799,
    description: 'North POP, rack 2',
  })
  createNas(@Auth() auth: AuthContext, @Body() dto: CreateNasDto): Promise<NasDto> {
    return this.nas.create(auth, dto);
  }

  @Get()
  @RequireScopes('provisioning:read')
  @ApiOperation({
    description:
      'Lists the NAS registry (the RADIUS clients FreeRADIUS accepts), newest first, paginated by cursor. Secrets are never shown.',
    summary: 'List the NAS registry, newest first',
  })
  @ApiEnvelope(NasDto, { list: true })
  @ApiErrors(...AUTH_ERRORS, 'invalid_query', 'invalid_cursor')
  async listNas(@Auth() auth: AuthContext, @Query() query: ListNasQueryDto): Promise<Page<NasDto>> {
    return (await this.nas.list(auth.tenantId, query)).map(NasDto.from);
  }

  @Get(':id')
  @RequireScopes('provisioning:read')
  @ApiOperation({
    description:
      'Returns one NAS of the registry (never its secret) with its ETag. 404 `not_found` when the tenant has no NAS with this id.',
    summary: 'Get a NAS',
  })
  @ApiEnvelope(NasDto)
  @ApiErrors(...AUTH_ERRORS, 'not_found')
  async getNas(@Auth() auth: AuthContext, @Param('id') id: string): Promise<NasDto> {
    return NasDto.from(await this.nas.get(auth.tenantId, id));
  }

  @Patch(':id')
  @RequireScopes('provisioning:write')
  @ApiOperation({
    summary: 'Change a NAS',
    description: "A new address or secret is written to FreeRADIUS's `nas` table with the registry.",
  })
  @ApiEnvelope(NasDto)
  @ApiErrors(...AUTH_ERRORS, ...BODY_ERRORS, 'not_found', 'duplicate_nas')
  @ApiExampleBody(UpdateNasDto, { secret: 'n3w-shared-s3cret', coa_port: 1700 })
  @HonoursIfMatch()
  updateNas(@Auth() auth: AuthContext, @Param('id') id: string, @Body() dto: UpdateNasDto): Promise<NasDto> {
    return this.nas.update(auth, id, dto);
  }

  @Delete(':id')
  @RequireScopes('provisioning:write')
  @ApiOperation({
    description:
      "Removes a NAS from the registry and from FreeRADIUS's `nas` table, so FreeRADIUS stops accepting it once it reloads its clients. Emits `nas.deleted`; honours If-Match; 404 `not_found` for an unknown id.",
    summary: "Remove a NAS from the registry and from FreeRADIUS's clients",
  })
  @ApiEnvelope(NasDto)
  @ApiErrors(...AUTH_ERRORS, 'not_found')
  @HonoursIfMatch()
  deleteNas(@Auth() auth: AuthContext, @Param('id') id: string): Promise<NasDto> {
    return this.nas.remove(auth, id);
  }
}
