import { Body, Controller, Delete, Get, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Auth, RequireScopes } from '../../common/auth/auth.decorators';
import { Page } from '../../common/envelope/envelope';
import { HonoursIfMatch } from '../../common/http/honours-if-match';
import type { AuthContext } from '../../common/request-context';
import {
  ApiEnvelope,
  ApiErrors,
  AUTH_ERRORS,
  BODY_ERRORS,
  IDEMPOTENCY_ERRORS,
} from '../../common/swagger/api-envelope';
import { ApiExampleBody } from '../../common/swagger/api-types';
import { CreateIpPoolDto, IpPoolDto, ListIpPoolsQueryDto, UpdateIpPoolDto } from '../dto/ip-pool.dto';
import { IpPoolsService } from './ip-pools.service';

@ApiTags('Network')
@ApiBearerAuth()
@Controller('api/v1/ip-pools')
export class IpPoolsController {
  constructor(private readonly pools: IpPoolsService) {}

  @Post()
  @RequireScopes('provisioning:write')
  @ApiOperation({
    summary: 'Create an IP pool',
    description:
      'An IPv4 or IPv6 network of the tenant, `static` (the API hands its addresses or delegated prefixes to services) ' +
      'or `dynamic` (the NAS does; services get `Framed-Pool`). Pools of a tenant never overlap (409 `pool_overlap`). ' +
      'A static IPv4 pool adopts the static addresses live services already hold inside it. Emits `ip_pool.created`.',
  })
  @ApiEnvelope(IpPoolDto, { status: 201 })
  @ApiErrors(
    ...AUTH_ERRORS,
    ...BODY_ERRORS,
    ...IDEMPOTENCY_ERRORS,
    'duplicate_ip_pool',
    'pool_overlap',
    'invalid_reference',
  )
  @ApiExampleBody(CreateIpPoolDto, {
    name: 'static-north',
    cidr: '198.51.100.0/24',
    gateway: '198.51.100.1',
    excluded: ['198.51.100.2-198.51.100.9'],
    kind: 'static',
    cooldown_s: 3600,
  })
  createIpPool(@Auth() auth: AuthContext, @Body() dto: CreateIpPoolDto): Promise<IpPoolDto> {
    return this.pools.create(auth, dto);
  }

  @Get()
  @RequireScopes('provisioning:read')
  @ApiOperation({
    summary: 'List the IP pools, newest first',
    description: 'The tenant’s pools with their utilisation, newest first, paginated by cursor.',
  })
  @ApiEnvelope(IpPoolDto, { list: true })
  @ApiErrors(...AUTH_ERRORS, 'invalid_query', 'invalid_cursor')
  listIpPools(@Auth() auth: AuthContext, @Query() query: ListIpPoolsQueryDto): Promise<Page<IpPoolDto>> {
    return this.pools.list(auth.tenantId, query);
  }

  @Get(':id')
  @RequireScopes('provisioning:read')
  @ApiOperation({
    summary: 'Get an IP pool and its utilisation',
    description:
      'The pool with its utilisation: `size` (what may be handed out), `allocated`, `cooling` (released, waiting out ' +
      'the cooldown) and `free`. 404 `not_found` when the tenant has no pool with this id.',
  })
  @ApiEnvelope(IpPoolDto)
  @ApiErrors(...AUTH_ERRORS, 'not_found')
  getIpPool(@Auth() auth: AuthContext, @Param('id') id: string): Promise<IpPoolDto> {
    return this.pools.get(auth.tenantId, id);
  }

  @Patch(':id')
  @RequireScopes('provisioning:write')
  @ApiOperation({
    summary: 'Change an IP pool',
    description:
      'Its name, excluded ranges, NAS or cooldown (its network and kind are fixed). A dynamic pool is not renamed while ' +
      'live services are linked to it (409 `pool_in_use`): their RADIUS rows name it. Emits `ip_pool.updated`.',
  })
  @ApiEnvelope(IpPoolDto)
  @ApiErrors(
    ...AUTH_ERRORS,
    ...BODY_ERRORS,
    'not_found',
    'duplicate_ip_pool',
    'pool_in_use',
    'invalid_reference',
  )
  @ApiExampleBody(UpdateIpPoolDto, { excluded: ['198.51.100.2-198.51.100.19'], cooldown_s: 600 })
  @HonoursIfMatch()
  updateIpPool(
    @Auth() auth: AuthContext,
    @Param('id') id: string,
    @Body() dto: UpdateIpPoolDto,
  ): Promise<IpPoolDto> {
    return this.pools.update(auth, id, dto);
  }

  @Delete(':id')
  @RequireScopes('provisioning:write')
  @ApiOperation({
    summary: 'Delete an IP pool',
    description:
      'Refused with 409 `pool_in_use` while a service holds one of its addresses or a live service is linked to it; ' +
      'its cooling addresses go with it. Emits `ip_pool.deleted`; honours If-Match.',
  })
  @ApiEnvelope(IpPoolDto)
  @ApiErrors(...AUTH_ERRORS, 'not_found', 'pool_in_use')
  @HonoursIfMatch()
  deleteIpPool(@Auth() auth: AuthContext, @Param('id') id: string): Promise<IpPoolDto> {
    return this.pools.remove(auth, id);
  }
}
