import { Body, Controller, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Page } from '../../common/envelope/envelope';
import { PageQueryDto } from '../../common/pagination';
import type { AuthContext } from '../../common/request-context';
import {
  ApiEnvelope,
  ApiErrors,
  AUTH_ERRORS,
  BODY_ERRORS,
  IDEMPOTENCY_ERRORS,
} from '../../common/swagger/api-envelope';
import { ApiExampleBody } from '../../common/swagger/api-types';
import { Auth, RequireScopes } from '../../common/auth/auth.decorators';
import { BillingProfilesService } from './billing-profiles.service';
import {
  BillingProfileDto,
  CreateBillingProfileDto,
  UpdateBillingProfileDto,
} from './dto/billing-profile.dto';
import { HonoursIfMatch } from '../../common/http/honours-if-match';

@ApiTags('Billing')
@ApiBearerAuth()
@Controller('api/v1/billing-profiles')
export class BillingProfilesController {
  constructor(private readonly profiles: BillingProfilesService) {}

  @Post()
  @HttpCode(201)
  @RequireScopes('billing:write')
  @ApiOperation({
    description:
      "Creates a billing profile: the currency, billing day and payment terms bill runs use for the subscribers that name it. With `is_default: true` it replaces the tenant's default (the previous one gets `billing_profile.updated`). Emits `billing_profile.created`.",
    summary: 'Create a billing profile',
  })
  @ApiEnvelope(BillingProfileDto, { status: 201 })
  @ApiErrors(...AUTH_ERRORS, ...BODY_ERRORS, ...IDEMPOTENCY_ERRORS)
  @ApiExampleBody(CreateBillingProfileDto, {
    name: 'Residential monthly',
    currency: 'USD',
    billing_day: 1,
    payment_terms_days: 14,
    auto_suspend_after_days: 30,
  })
  async createBillingProfile(
    @Auth() auth: AuthContext,
    @Body() dto: CreateBillingProfileDto,
  ): Promise<BillingProfileDto> {
    return this.profiles.create(auth, dto);
  }

  @Get()
  @RequireScopes('billing:read')
  @ApiOperation({
    description:
      "Lists the tenant's billing profiles (currency, billing day, payment terms, which one is the default), newest first, with cursor pagination. Read-only.",
    summary: 'List billing profiles',
  })
  @ApiEnvelope(BillingProfileDto, { list: true })
  @ApiErrors(...AUTH_ERRORS, 'invalid_query', 'invalid_cursor')
  async listBillingProfiles(
    @Auth() auth: AuthContext,
    @Query() query: PageQueryDto,
  ): Promise<Page<BillingProfileDto>> {
    return (await this.profiles.list(auth.tenantId, query)).map(BillingProfileDto.from);
  }

  @Get(':id')
  @RequireScopes('billing:read')
  @ApiOperation({
    description:
      'Returns one billing profile with its ETag. 404 `not_found` when the tenant has no profile with this id.',
    summary: 'Get a billing profile',
  })
  @ApiEnvelope(BillingProfileDto)
  @ApiErrors(...AUTH_ERRORS, 'not_found')
  async getBillingProfile(@Auth() auth: AuthContext, @Param('id') id: string): Promise<BillingProfileDto> {
    return BillingProfileDto.from(await this.profiles.getById(auth.tenantId, id));
  }

  @Patch(':id')
  @RequireScopes('billing:write')
  @ApiOperation({
    description:
      "Changes the fields sent and leaves the others as they are; `is_default: true` moves the tenant's default here. Honours If-Match (412 `precondition_failed` on a stale tag) and emits `billing_profile.updated` naming the changed fields.",
    summary: 'Change a billing profile',
  })
  @ApiEnvelope(BillingProfileDto)
  @ApiErrors(...AUTH_ERRORS, ...BODY_ERRORS, 'not_found')
  @ApiExampleBody(UpdateBillingProfileDto, { payment_terms_days: 30 })
  @HonoursIfMatch()
  async updateBillingProfile(
    @Auth() auth: AuthContext,
    @Param('id') id: string,
    @Body() dto: UpdateBillingProfileDto,
  ): Promise<BillingProfileDto> {
    return BillingProfileDto.from(await this.profiles.update(auth, id, dto));
  }
}
