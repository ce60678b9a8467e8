import { Body, Controller, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { RenderedPage } from '../common/envelope/envelope';
import type { AuthContext } from '../common/request-context';
import {
  ApiEnvelope,
  ApiErrors,
  AUTH_ERRORS,
  BODY_ERRORS,
  IDEMPOTENCY_ERRORS,
} from '../common/swagger/api-envelope';
import { ApiExampleBody } from '../common/swagger/api-types';
import { Auth, RequireScopes } from '../common/auth/auth.decorators';
import { ChangeStatusDto } from './dto/change-status.dto';
import { CreateSubscriberDto } from './dto/create-subscriber.dto';
import { ListSubscribersQueryDto } from './dto/list-subscribers-query.dto';
import { CreatedSubscriberDto, SubscriberDto } from './dto/subscriber-response.dto';
import { UpdateSubscriberDto } from './dto/update-subscriber.dto';
import { SubscribersService } from './subscribers.service';
import { HonoursIfMatch } from '../common/http/honours-if-match';

@ApiTags('Subscribers')
@ApiBearerAuth()
@Controller('api/v1/subscribers')
export class SubscribersController {
  constructor(private readonly subscribers: SubscribersService) {}

  @Post()
  @HttpCode(201)
  @RequireScopes('subscribers:write')
  @ApiOperation({
    summary: 'Create a subscriber',
    description:
      '409 duplicate_subscriber when external_id (or a live subscriber with the same email) exists. ' +
      'The answer holds only id, external_id, full_name, status, billing_profile_id and created_at.',
  })
  @ApiEnvelope(CreatedSubscriberDto, { status: 201 })
  @ApiErrors(
    ...AUTH_ERRORS,
    ...BODY_ERRORS,
    ...IDEMPOTENCY_ERRORS,
    'duplicate_subscriber',
    'invalid_reference',
  )
  @ApiExampleBody(CreateSubscriberDto, {
    external_id: 'crm-000123',
    full_name: 'Ada Lovelace',
    email: 'ada@example.net',
    phone: '+14155550123',
    status: 'prospect',
    address: { line1: '12 Fibre Lane', city: 'Springfield', state: 'IL', postal_code: '62701' },
    metadata: { plan: 'fiber-500', referral: 'door-to-door' },
  })
  async createSubscriber(
    @Auth() auth: AuthContext,
    @Body() dto: CreateSubscriberDto,
  ): Promise<CreatedSubscriberDto> {
    return this.subscribers.create(auth, dto);
  }

  @Get()
  @RequireScopes('subscribers:read')
  @ApiOperation({
    description:
      'Lists subscribers, newest first, filtered by status, external id or email, paginated by cursor. Read-only.',
    summary: 'List subscribers, newest first',
  })
  @ApiEnvelope(SubscriberDto, { list: true })
  @ApiErrors(...AUTH_ERRORS, 'invalid_query', 'invalid_cursor')
  async listSubscribers(
    @Auth() auth: AuthContext,
    @Query() query: ListSubscribersQueryDto,
  ): Promise<RenderedPage> {
    return this.subscribers.list(auth.tenantId, query);
  }

  @Get(':id')
  @RequireScopes('subscribers:read')
  @ApiOperation({
    description:
      'Returns one subscriber with its contact fields, address, status and metadata, and its ETag (send it as If-Match to change it safely). 404 `not_found` for an unknown id.',
    summary: 'Get a subscriber, contact fields included',
  })
  @ApiEnvelope(SubscriberDto)
  @ApiErrors(...AUTH_ERRORS, 'not_found')
  async getSubscriber(@Auth() auth: AuthContext, @Param('id') id: string): Promise<SubscriberDto> {
    return SubscriberDto.from(await this.subscribers.getById(auth.tenantId, id));
  }

  @Patch(':id')
  @RequireScopes('subscribers:write')
  @ApiOperation({
    summary: 'Change contact, address, metadata, billing profile or name',
    description:
      'Status changes go through POST /subscribers/{id}/status. Metadata merges; a null value deletes a key.',
  })
  @ApiEnvelope(SubscriberDto)
  @ApiErrors(
    ...AUTH_ERRORS,
    ...BODY_ERRORS,
    'not_found',
    'duplicate_subscriber',
    'invalid_reference',
    'invalid_state_transition',
  )
  @ApiExampleBody(UpdateSubscriberDto, {
    phone: '+14155550199',
    metadata: { plan: 'fiber-1000', referral: null },
  })
  @HonoursIfMatch()
  async updateSubscriber(
    @Auth() auth: AuthContext,
    @Param('id') id: string,
    @Body() dto: UpdateSubscriberDto,
  ): Promise<SubscriberDto> {
    return SubscriberDto.from(await this.subscribers.update(auth, id, dto));
  }

  @Post(':id/status')
  @HttpCode(200)
  @RequireScopes('subscribers:write')
  @ApiOperation({
    summary: 'Move a subscriber through its lifecycle',
    description:
      'prospect→pending|active|archived; pending→active|cancelled; active→suspended|cancelled; ' +
      'suspended→active|cancelled; cancelled→active|archived. Suspending needs a reason: non_payment, manual or fraud. ' +
      'Archiving a subscriber who still owes money (a balance above 0 in any currency) is 409 balance_outstanding.',
  })
  @ApiEnvelope(SubscriberDto)
  @ApiErrors(
    ...AUTH_ERRORS,
    ...BODY_ERRORS,
    ...IDEMPOTENCY_ERRORS,
    'not_found',
    'invalid_state_transition',
    'balance_outstanding',
  )
  @ApiExampleBody(ChangeStatusDto, { status: 'active', reason: 'Installation done' })
  @HonoursIfMatch()
  async changeSubscriberStatus(
    @Auth() auth: AuthContext,
    @Param('id') id: string,
    @Body() dto: ChangeStatusDto,
  ): Promise<SubscriberDto> {
    return this.subscribers.changeStatus(auth, id, dto);
  }
}
