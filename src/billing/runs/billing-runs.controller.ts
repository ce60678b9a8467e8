import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Auth, RequireScopes } from '../../common/auth/auth.decorators';
import { Page } from '../../common/envelope/envelope';
import type { AuthContext } from '../../common/request-context';
import {
  ApiEnvelope,
  ApiErrors,
  AUTH_ERRORS,
  BODY_ERRORS,
  IDEMPOTENCY_ERRORS,
} from '../../common/swagger/api-envelope';
import { ApiExampleBody } from '../../common/swagger/api-types';
import { BillingRunsService } from './billing-runs.service';
import { PageQueryDto } from '../../common/pagination';
import {
  BillingRunDto,
  BillingRunItemDto,
  CreateBillingRunDto,
  ListBillingRunsQueryDto,
} from './dto/billing-run.dto';

@ApiTags('Billing')
@ApiBearerAuth()
@Controller('api/v1/billing-runs')
export class BillingRunsController {
  constructor(private readonly runs: BillingRunsService) {}

  @Post()
  @HttpCode(202)
  @RequireScopes('billing:write')
  @ApiOperation({
    summary: 'Start a bill run',
    description:
      "Bills every subscriber whose billing day is as_of: each service from the day it is billed until (its billed-through date) to the next billing day in advance, the days before as_of not yet billed in arrears, plan changes and terminations trued up, and the subscriber's pending charges; carried out in the background (poll the run, read what it issued per subscriber at /billing-runs/{id}/items). A (subscriber, day) is billed once, whatever runs repeat or overlap. 422 `validation_failed` on `as_of` when a real run's day has not come yet (a dry run may look 62 days ahead).",
  })
  @ApiEnvelope(BillingRunDto, { status: 202 })
  @ApiErrors(...AUTH_ERRORS, ...BODY_ERRORS, ...IDEMPOTENCY_ERRORS)
  @ApiExampleBody(CreateBillingRunDto, { as_of: '2026-12-01', dry_run: true })
  async createBillingRun(
    @Auth() auth: AuthContext,
    @Body() dto: CreateBillingRunDto,
  ): Promise<BillingRunDto> {
    return this.runs.start(auth, dto);
  }

  @Get()
  @RequireScopes('billing:read')
  @ApiOperation({
    description:
      "Lists the tenant's bill runs, newest first, with their status and totals, paginated by cursor. Read-only.",
    summary: 'List bill runs, newest first',
  })
  @ApiEnvelope(BillingRunDto, { list: true })
  @ApiErrors(...AUTH_ERRORS, 'invalid_query', 'invalid_cursor')
  async listBillingRuns(
    @Auth() auth: AuthContext,
    @Query() query: ListBillingRunsQueryDto,
  ): Promise<Page<BillingRunDto>> {
    return (await this.runs.list(auth.tenantId, query)).map((run) => BillingRunDto.from(run));
  }

  @Get(':id/items')
  @RequireScopes('billing:read')
  @ApiOperation({
    description:
      'Lists what a run issued per subscriber (a dry run: what it would issue), oldest first, paginated by cursor: the lines (plans in advance, arrears, true-up credits, pending charges), the total, and the invoice or credit created, or why the subscriber could not be billed. 404 `not_found` for an unknown run.',
    summary: "A bill run's invoices per subscriber, with their lines",
  })
  @ApiEnvelope(BillingRunItemDto, { list: true })
  @ApiErrors(...AUTH_ERRORS, 'not_found', 'invalid_query', 'invalid_cursor')
  async listBillingRunItems(
    @Auth() auth: AuthContext,
    @Param('id') id: string,
    @Query() query: PageQueryDto,
  ): Promise<Page<BillingRunItemDto>> {
    return (await this.runs.items(auth.tenantId, id, query)).map((item) => BillingRunItemDto.from(item));
  }

  @Get(':id')
  @RequireScopes('billing:read')
  @ApiOperation({
    description:
      'Returns one bill run: its status while the worker bills (queued, running, completed, failed), the subscribers billed, the invoices and credits created, and per-subscriber errors. Poll it after `POST /billing-runs`, or listen for `billing_run.completed`.',
    summary: 'Get a bill run with its progress and totals',
  })
  @ApiEnvelope(BillingRunDto)
  @ApiErrors(...AUTH_ERRORS, 'not_found')
  async getBillingRun(@Auth() auth: AuthContext, @Param('id') id: string): Promise<BillingRunDto> {
    return BillingRunDto.from(await this.runs.get(auth.tenantId, id));
  }
}
