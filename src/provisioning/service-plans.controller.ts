import { Body, Controller, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
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
import {
  CreateServicePlanDto,
  ListServicePlansQueryDto,
  ServicePlanDto,
  UpdateServicePlanDto,
} from './dto/service-plan.dto';
import { ServicePlansService } from './service-plans.service';
import { HonoursIfMatch } from '../common/http/honours-if-match';

@ApiTags('Provisioning')
@ApiBearerAuth()
@Controller('api/v1/service-plans')
export class ServicePlansController {
  constructor(private readonly plans: ServicePlansService) {}

  @Post()
  @HttpCode(201)
  @RequireScopes('provisioning:write')
  @ApiOperation({
    summary: 'Create a service plan',
    description: '409 duplicate_service_plan when the name exists.',
  })
  @ApiEnvelope(ServicePlanDto, { status: 201 })
  @ApiErrors(...AUTH_ERRORS, ...BODY_ERRORS, ...IDEMPOTENCY_ERRORS, 'duplicate_service_plan')
  @ApiExampleBody(CreateServicePlanDto, {
    name: 'Fiber 500',
    download_kbps: 500000,
    upload_kbps: 100000,
    price: 4999,
    currency: 'USD',
    billing_period: 'monthly',
    data_cap_bytes: 500_000_000_000,
    cap_action: 'throttle',
    throttle_download_kbps: 2_000,
    throttle_upload_kbps: 1_000,
    burst_download_kbps: 800_000,
    burst_upload_kbps: 150_000,
    burst_threshold_download_kbps: 400_000,
    burst_threshold_upload_kbps: 80_000,
    burst_time_s: 16,
  })
  async createServicePlan(
    @Auth() auth: AuthContext,
    @Body() dto: CreateServicePlanDto,
  ): Promise<ServicePlanDto> {
    return this.plans.create(auth, dto);
  }

  @Get()
  @RequireScopes('provisioning:read')
  @ApiOperation({
    description:
      "Lists the tenant's service plans (speeds, price, currency), newest first, paginated by cursor. Read-only.",
    summary: 'List service plans, newest first',
  })
  @ApiEnvelope(ServicePlanDto, { list: true })
  @ApiErrors(...AUTH_ERRORS, 'invalid_query', 'invalid_cursor')
  async listServicePlans(
    @Auth() auth: AuthContext,
    @Query() query: ListServicePlansQueryDto,
  ): Promise<Page<ServicePlanDto>> {
    return (await this.plans.list(auth.tenantId, query)).map(ServicePlanDto.from);
  }

  @Get(':id')
  @RequireScopes('provisioning:read')
  @ApiOperation({
    description:
      'Returns one service plan with its ETag. 404 `not_found` when the tenant has no plan with this id.',
    summary: 'Get a service plan',
  })
  @ApiEnvelope(ServicePlanDto)
  @ApiErrors(...AUTH_ERRORS, 'not_found')
  async getServicePlan(@Auth() auth: AuthContext, @Param('id') id: string): Promise<ServicePlanDto> {
    return ServicePlanDto.from(await this.plans.get(auth.tenantId, id));
  }

  @Patch(':id')
  @RequireScopes('provisioning:write')
  @ApiOperation({
    summary: 'Rename, retire or (while unused) re-rate a plan',
    description:
      'name and active always; download_kbps, upload_kbps and price answer 409 plan_in_use while a service that is ' +
      'not terminated uses the plan: create a new plan and change_plan.',
  })
  @ApiEnvelope(ServicePlanDto)
  @ApiErrors(...AUTH_ERRORS, ...BODY_ERRORS, 'not_found', 'duplicate_service_plan', 'plan_in_use')
  @ApiExampleBody(UpdateServicePlanDto, { name: 'Fiber 500 (2026)', download_kbps: 600000 })
  @HonoursIfMatch()
  async updateServicePlan(
    @Auth() auth: AuthContext,
    @Param('id') id: string,
    @Body() dto: UpdateServicePlanDto,
  ): Promise<ServicePlanDto> {
    return this.plans.update(auth, id, dto);
  }
}
