import { Body, Controller, Get, HttpCode, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Page } from '../../common/envelope/envelope';
import { PageQueryDto } from '../../common/pagination';
import { ApiEnvelope, ApiErrors, AUTH_ERRORS } from '../../common/swagger/api-envelope';
import { ApiExampleBody } from '../../common/swagger/api-types';
import type { AuthContext } from '../../common/request-context';
import { Auth, RequireScopes } from '../../common/auth/auth.decorators';
import { CreateTenantDto, TenantResponseDto } from './dto/tenant.dto';
import { TenantsService } from './tenants.service';

@ApiTags('Admin')
@ApiBearerAuth()
@Controller('api/v1/tenants')
export class TenantsController {
  constructor(private readonly tenants: TenantsService) {}

  @Post()
  @HttpCode(201)
  @RequireScopes('platform:admin')
  @ApiOperation({
    description:
      'Creates a tenant (an ISP served by this deployment) with its unique slug, and emits `tenant.created`. Needs `platform:admin`; 409 `duplicate_tenant` when the slug is taken.',
    summary: 'Create a tenant (platform:admin)',
  })
  @ApiEnvelope(TenantResponseDto, { status: 201 })
  @ApiErrors(
    ...AUTH_ERRORS,
    'invalid_json',
    'missing_field',
    'unknown_field',
    'validation_failed',
    'duplicate_tenant',
  )
  @ApiExampleBody(CreateTenantDto, { slug: 'acme-fiber', name: 'Acme Fiber Ltd' })
  createTenant(@Auth() auth: AuthContext, @Body() dto: CreateTenantDto): Promise<TenantResponseDto> {
    return this.tenants.create(auth, dto.slug, dto.name);
  }

  @Get()
  @RequireScopes('platform:admin')
  @ApiOperation({
    description:
      'Lists every tenant of the platform, newest first, paginated by cursor. Needs a `platform:admin` token (403 otherwise).',
    summary: 'List tenants (platform:admin)',
  })
  @ApiEnvelope(TenantResponseDto, { list: true })
  @ApiErrors(...AUTH_ERRORS, 'invalid_query', 'invalid_cursor')
  async listTenants(@Query() query: PageQueryDto): Promise<Page<TenantResponseDto>> {
    return (await this.tenants.list(query)).map(TenantResponseDto.from);
  }
}
