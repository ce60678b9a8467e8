import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Page } from '../common/envelope/envelope';
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
import { Auth, RequireScopes } from '../common/auth/auth.decorators';
import { ReturnsSecret } from '../common/http/returns-secret';
import { SkipIdempotency } from '../gateway';
import {
  CreateWebhookDto,
  RedeliveryDto,
  UpdateWebhookDto,
  WebhookAttemptDto,
  WebhookDto,
  WebhookTestDto,
  WebhookWithSecretDto,
} from './dto/webhook.dto';
import { ListDeliveriesQueryDto, WebhookDeliveryDto } from './dto/webhook-delivery.dto';
import { WebhooksService } from './webhooks.service';
import { HonoursIfMatch } from '../common/http/honours-if-match';

@ApiTags('Webhooks')
@ApiBearerAuth()
@Controller('api/v1/webhooks')
export class WebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  @Get()
  @RequireScopes('webhooks:read')
  @ApiOperation({
    description:
      "Lists the tenant's webhook subscriptions (url, event patterns, enabled, why one was disabled), newest first. Signing secrets are never shown here.",
    summary: 'List webhook subscriptions',
  })
  @ApiEnvelope(WebhookDto, { list: true })
  @ApiErrors(...AUTH_ERRORS, 'invalid_query', 'invalid_cursor')
  async listWebhooks(@Auth() auth: AuthContext, @Query() query: PageQueryDto): Promise<Page<WebhookDto>> {
    return (await this.webhooks.list(auth.tenantId, query)).map(WebhookDto.from);
  }

  @Post()
  @HttpCode(201)
  @RequireScopes('webhooks:write')
  @ReturnsSecret()
  @ApiOperation({
    summary: 'Register a callback endpoint',
    description:
      'The `whsec_` secret is in this response only. Deliveries are signed per Standard Webhooks ' +
      '(webhook-id, webhook-timestamp, webhook-signature). https only; private addresses are refused. ' +
      'A retry with the same idempotency key answers the same subscription with `secret: null` (the secret is ' +
      'never stored with the key); rotate-secret issues a new one.',
  })
  @ApiEnvelope(WebhookWithSecretDto, { status: 201 })
  @ApiErrors(...AUTH_ERRORS, ...BODY_ERRORS, ...IDEMPOTENCY_ERRORS)
  @ApiExampleBody(CreateWebhookDto, {
    url: 'https://example.com/hooks/isp',
    events: ['subscriber.*', 'invoice.paid'],
    description: 'CRM sync',
  })
  createWebhook(@Auth() auth: AuthContext, @Body() dto: CreateWebhookDto): Promise<WebhookWithSecretDto> {
    return this.webhooks.create(auth, dto);
  }

  @Get(':id')
  @RequireScopes('webhooks:read')
  @ApiOperation({
    description:
      'Returns one webhook subscription (never its secret) with its ETag. 404 `not_found` for an unknown id.',
    summary: 'Get a webhook subscription',
  })
  @ApiEnvelope(WebhookDto)
  @ApiErrors(...AUTH_ERRORS, 'not_found')
  async getWebhook(@Auth() auth: AuthContext, @Param('id') id: string): Promise<WebhookDto> {
    return WebhookDto.from(await this.webhooks.getById(auth.tenantId, id));
  }

  @Patch(':id')
  @RequireScopes('webhooks:write')
  @ApiOperation({
    description:
      'Changes the url, event patterns, description or enabled flag sent, leaving the rest as it is. Honours If-Match and emits `webhook.updated`; 422 `validation_failed` for an unknown event pattern or a url the server refuses.',
    summary: 'Change url, events, description or enabled',
  })
  @ApiEnvelope(WebhookDto)
  @ApiErrors(...AUTH_ERRORS, ...BODY_ERRORS, 'not_found')
  @ApiExampleBody(UpdateWebhookDto, { events: ['*'], description: 'CRM sync, every event' })
  @HonoursIfMatch()
  async updateWebhook(
    @Auth() auth: AuthContext,
    @Param('id') id: string,
    @Body() dto: UpdateWebhookDto,
  ): Promise<WebhookDto> {
    return WebhookDto.from(await this.webhooks.update(auth, id, dto));
  }

  @Delete(':id')
  @RequireScopes('webhooks:write')
  @ApiOperation({
    description:
      'Deletes a webhook subscription; its deliveries not yet sent are dropped. Emits `webhook.deleted`; honours If-Match; 404 `not_found` for an unknown id.',
    summary: 'Delete a subscription and its pending deliveries',
  })
  @ApiEnvelope(WebhookDto)
  @ApiErrors(...AUTH_ERRORS, 'not_found')
  @HonoursIfMatch()
  async deleteWebhook(@Auth() auth: AuthContext, @Param('id') id: string): Promise<WebhookDto> {
    return WebhookDto.from(await this.webhooks.remove(auth, id));
  }

  @Post(':id/rotate-secret')
  @HttpCode(200)
  @RequireScopes('webhooks:write')
  @ReturnsSecret()
  @SkipIdempotency()
  @ApiOperation({
    description:
      'Issues a new signing secret, shown once in this answer (sent with `Cache-Control: no-store`); for 24 hours deliveries carry signatures of both the old and the new one, so the receiver can switch without losing any. Emits `webhook.secret_rotated`; honours If-Match.',
    summary: 'Issue a new secret; for 24 h deliveries carry signatures of both',
  })
  @ApiEnvelope(WebhookWithSecretDto)
  @ApiErrors(...AUTH_ERRORS, 'not_found')
  @HonoursIfMatch()
  async rotateWebhookSecret(
    @Auth() auth: AuthContext,
    @Param('id') id: string,
  ): Promise<WebhookWithSecretDto> {
    return WebhookWithSecretDto.from(await this.webhooks.rotateSecret(auth, id));
  }

  @Post(':id/test')
  @HttpCode(202)
  @RequireScopes('webhooks:write')
  @ApiOperation({
    description:
      'Queues a `webhook.test` event for this endpoint alone, so a receiver can be checked end to end; follow it in the attempt log. 409 `invalid_state_transition` when the webhook is disabled.',
    summary: 'Send a webhook.test event to this endpoint alone',
  })
  @ApiEnvelope(WebhookTestDto, { status: 202 })
  @ApiErrors(...AUTH_ERRORS, ...IDEMPOTENCY_ERRORS, 'not_found', 'invalid_state_transition')
  async testWebhook(@Auth() auth: AuthContext, @Param('id') id: string): Promise<WebhookTestDto> {
    return this.webhooks.sendTest(auth, id);
  }

  @Get(':id/deliveries')
  @RequireScopes('webhooks:read')
  @ApiOperation({
    description:
      'Lists the delivery attempts of one subscription, newest first: the event, the HTTP status or error the endpoint gave, how long it took, and when a retry is due. 404 `not_found` for an unknown webhook.',
    summary: 'The attempt log of a subscription, newest first',
  })
  @ApiEnvelope(WebhookAttemptDto, { list: true })
  @ApiErrors(...AUTH_ERRORS, 'not_found', 'invalid_query', 'invalid_cursor')
  async listWebhookAttempts(
    @Auth() auth: AuthContext,
    @Param('id') id: string,
    @Query() query: PageQueryDto,
  ): Promise<Page<WebhookAttemptDto>> {
    return (await this.webhooks.attempts(auth.tenantId, id, query)).map(WebhookAttemptDto.from);
  }
}

@ApiTags('Webhooks')
@ApiBearerAuth()
@Controller('api/v1/webhook-deliveries')
export class WebhookDeliveriesController {
  constructor(private readonly webhooks: WebhooksService) {}

  @Get()
  @RequireScopes('webhooks:read')
  @ApiOperation({
    summary: "A subscription's deliveries and their status, newest first",
    description: 'Each event owed to the subscription: pending, succeeded, failed or cancelled.',
  })
  @ApiEnvelope(WebhookDeliveryDto, { list: true })
  @ApiErrors(...AUTH_ERRORS, 'not_found', 'invalid_query', 'invalid_cursor')
  async listWebhookDeliveries(
    @Auth() auth: AuthContext,
    @Query() query: ListDeliveriesQueryDto,
  ): Promise<Page<WebhookDeliveryDto>> {
    return (await this.webhooks.deliveries(auth.tenantId, query)).map(WebhookDeliveryDto.from);
  }

  @Post(':id/redeliver')
  @HttpCode(202)
  @RequireScopes('webhooks:write')
  @ApiOperation({
    summary: 'Send the event of a delivery again, as a new delivery',
    description:
      'Any delivery, a cancelled one included, once its subscription is enabled (409 while disabled).',
  })
  @ApiEnvelope(RedeliveryDto, { status: 202 })
  @ApiErrors(...AUTH_ERRORS, ...IDEMPOTENCY_ERRORS, 'not_found', 'invalid_state_transition')
  async redeliverWebhookDelivery(@Auth() auth: AuthContext, @Param('id') id: string): Promise<RedeliveryDto> {
    return this.webhooks.redeliver(auth, id);
  }
}
