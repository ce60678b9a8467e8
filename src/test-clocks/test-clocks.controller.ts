import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Auth, RequireScopes } from '../common/auth/auth.decorators';
import { Page } from '../common/envelope/envelope';
import { HonoursIfMatch } from '../common/http/honours-if-match';
import { ReturnsSecret } from '../common/http/returns-secret';
import { PageQueryDto } from '../common/pagination';
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
  AdvanceTestClockDto,
  CreatedTestClockDto,
  CreateTestClockDto,
  SkipIdempotency,
  TestClockDto,
} from '../gateway';
import { TestClocksApi } from './test-clocks.api';

@ApiTags('Test clocks')
@ApiBearerAuth()
@Controller('api/v1/test-clocks')
export class TestClocksController {
  constructor(private readonly clocks: TestClocksApi) {}

  @Post()
  @HttpCode(201)
  @RequireScopes('admin')
  @SkipIdempotency() // the answer holds the test tenant's token, which is never stored
  @ReturnsSecret()
  @ApiOperation({
    summary: 'Create a test clock and its test tenant (admin)',
    description:
      "Makes a test clock at `frozen_time` and the test tenant it governs (never a live tenant): every record of that tenant is dated by the clock, and only the clock's advances move its time. The answer holds the tenant and an `admin` token of it (its secret in this answer only). 403 `test_tenant_forbidden` from a test tenant. docs/test-clocks.md.",
  })
  @ApiEnvelope(CreatedTestClockDto, { status: 201 })
  @ApiErrors(...AUTH_ERRORS, ...BODY_ERRORS, 'test_tenant_forbidden')
  @ApiExampleBody(CreateTestClockDto, { name: 'Dunning rehearsal', frozen_time: '2027-01-01T00:00:00.000Z' })
  createTestClock(@Auth() auth: AuthContext, @Body() dto: CreateTestClockDto): Promise<CreatedTestClockDto> {
    return this.clocks.create(auth, dto);
  }

  @Get()
  @RequireScopes('admin')
  @ApiOperation({
    summary: 'List test clocks (admin)',
    description: 'Lists the test clocks the tenant made, newest first, paginated by cursor.',
  })
  @ApiEnvelope(TestClockDto, { list: true })
  @ApiErrors(...AUTH_ERRORS, 'invalid_query', 'invalid_cursor')
  listTestClocks(@Auth() auth: AuthContext, @Query() query: PageQueryDto): Promise<Page<TestClockDto>> {
    return this.clocks.list(auth.tenantId, query);
  }

  @Get(':id')
  @RequireScopes('admin')
  @ApiOperation({
    summary: 'Get a test clock (admin)',
    description:
      "Returns one of the tenant's test clocks: its frozen_time and status. 404 `not_found` otherwise.",
  })
  @ApiEnvelope(TestClockDto)
  @ApiErrors(...AUTH_ERRORS, 'not_found')
  getTestClock(@Auth() auth: AuthContext, @Param('id') id: string): Promise<TestClockDto> {
    return this.clocks.get(auth.tenantId, id);
  }

  @Post(':id/advance')
  @HttpCode(202)
  @RequireScopes('admin')
  @ApiOperation({
    summary: 'Advance a test clock (admin)',
    description:
      "Moves the clock forward to `to`, carrying out everything due in between in order, day by day: each day's bill run, the overdue sweep, reminders, late fees, suspensions and restorations, and the rules' reactions. Answers 202 with the clock `advancing`; `test_clock.ready` marks the end (status `ready`, frozen_time `to`). 422 `validation_failed` on `to` when it is not after frozen_time or more than 2 years after it; 409 `test_clock_advancing` while an advance is under way.",
  })
  @ApiEnvelope(TestClockDto, { status: 202 })
  @ApiErrors(...AUTH_ERRORS, ...BODY_ERRORS, ...IDEMPOTENCY_ERRORS, 'not_found', 'test_clock_advancing')
  @ApiExampleBody(AdvanceTestClockDto, { to: '2027-02-15T00:00:00.000Z' })
  advanceTestClock(
    @Auth() auth: AuthContext,
    @Param('id') id: string,
    @Body() dto: AdvanceTestClockDto,
  ): Promise<TestClockDto> {
    return this.clocks.advance(auth, id, dto);
  }

  @Delete(':id')
  @RequireScopes('admin')
  @ApiOperation({
    summary: 'Delete a test clock and its test tenant (admin)',
    description:
      "Deletes the clock, its test tenant and every record of that tenant in one transaction: subscribers, services (and their FreeRADIUS rows), invoices, payments, tickets, webhooks, notifications, imports, events, tokens (which stop working at once). Answers the clock as it was; emits `test_clock.deleted` to the owner's log. Honours If-Match. 404 `not_found` for an unknown clock or another tenant's; 409 `test_clock_advancing` while an advance is under way. docs/test-clocks.md.",
  })
  @ApiEnvelope(TestClockDto)
  @ApiErrors(...AUTH_ERRORS, 'not_found', 'test_clock_advancing')
  @HonoursIfMatch()
  deleteTestClock(@Auth() auth: AuthContext, @Param('id') id: string): Promise<TestClockDto> {
    return this.clocks.delete(auth, id);
  }
}
