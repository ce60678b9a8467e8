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
import { OrderDto, ServiceActionDto, ServiceWithOrderDto } from './dto/order.dto';
import {
  CreateServiceDto,
  ListServicesQueryDto,
  ListSubscriberServicesQueryDto,
  ServiceDto,
  UpdateServiceDto,
} from './dto/service.dto';
import { ServicesService } from './services.service';
import { HonoursIfMatch } from '../common/http/honours-if-match';

const LIST_ERRORS = [...AUTH_ERRORS, 'invalid_query', 'invalid_cursor'] as const;

@ApiTags('Provisioning')
@ApiBearerAuth()
@Controller('api/v1')
export class ServicesController {
  constructor(private readonly services: ServicesService) {}

  @Post('subscribers/:id/services')
  @HttpCode(202)
  @RequireScopes('provisioning:write')
  @ApiOperation({
    summary: 'Order a service for a subscriber',
    description:
      '202: the service is pending and its activate order is acknowledged; the worker carries it to the network ' +
      '(GET /provisioning-orders/{id}). The password is write-only. A prospect subscriber becomes pending with it, ' +
      'and a prospect or pending one active when the activation completes (subscriber.status_changed).',
  })
  @ApiEnvelope(ServiceWithOrderDto, { status: 202 })
  @ApiErrors(
    ...AUTH_ERRORS,
    ...BODY_ERRORS,
    ...IDEMPOTENCY_ERRORS,
    'not_found',
    'invalid_reference',
    'subscriber_not_serviceable',
    'duplicate_service_username',
    'duplicate_ip_address',
  )
  @ApiExampleBody(CreateServiceDto, {
    plan_id: 'plan_01JD3Z6W3R4T5Y6U7I8O9P0QAB',
    pppoe_username: 'ada.lovelace',
    pppoe_password: 'correct-horse-42',
    static_ipv4: '203.0.113.10',
    cpe_mac: 'AA-BB-CC-00-11-22',
    installation_address: '12 Fibre Lane, Springfield',
  })
  async createSubscriberService(
    @Auth() auth: AuthContext,
    @Param('id') id: string,
    @Body() dto: CreateServiceDto,
  ): Promise<ServiceWithOrderDto> {
    return this.services.create(auth, id, dto);
  }

  @Get('subscribers/:id/services')
  @RequireScopes('provisioning:read')
  @ApiOperation({
    description:
      "Lists one subscriber's services, newest first, paginated by cursor. 404 `not_found` for an unknown subscriber.",
    summary: "List a subscriber's services, newest first",
  })
  @ApiEnvelope(ServiceDto, { list: true })
  @ApiErrors(...LIST_ERRORS, 'not_found')
  async listSubscriberServices(
    @Auth() auth: AuthContext,
    @Param('id') id: string,
    @Query() query: ListSubscriberServicesQueryDto,
  ): Promise<Page<ServiceDto>> {
    return (await this.services.listForSubscriber(auth.tenantId, id, query)).map(ServiceDto.from);
  }

  @Get('services')
  @RequireScopes('provisioning:read')
  @ApiOperation({
    description:
      "Lists services across subscribers, newest first, filtered by subscriber, plan, status or PPPoE username, paginated by cursor. A service's PPPoE password is never shown.",
    summary: 'List services, newest first',
  })
  @ApiEnvelope(ServiceDto, { list: true })
  @ApiErrors(...LIST_ERRORS)
  async listServices(
    @Auth() auth: AuthContext,
    @Query() query: ListServicesQueryDto,
  ): Promise<Page<ServiceDto>> {
    return (await this.services.list(auth.tenantId, query)).map(ServiceDto.from);
  }

  @Get('services/:id')
  @RequireScopes('provisioning:read')
  @ApiOperation({
    description:
      'Returns one service (plan, status, network identity, installation address) with its ETag; the PPPoE password is write-only and never shown. 404 `not_found` for an unknown id.',
    summary: 'Get a service (never its password)',
  })
  @ApiEnvelope(ServiceDto)
  @ApiErrors(...AUTH_ERRORS, 'not_found')
  async getService(@Auth() auth: AuthContext, @Param('id') id: string): Promise<ServiceDto> {
    return ServiceDto.from(await this.services.get(auth.tenantId, id));
  }

  @Patch('services/:id')
  @RequireScopes('provisioning:write')
  @ApiOperation({
    summary: "Change a service's password, static address, CPE MAC or installation address",
    description: 'A new password or static address reaches the network through a modify order.',
  })
  @ApiEnvelope(ServiceDto)
  @ApiErrors(
    ...AUTH_ERRORS,
    ...BODY_ERRORS,
    'not_found',
    'duplicate_ip_address',
    'order_in_progress',
    'invalid_state_transition',
  )
  @ApiExampleBody(UpdateServiceDto, { cpe_mac: 'aa:bb:cc:00:11:23' })
  @HonoursIfMatch()
  async updateService(
    @Auth() auth: AuthContext,
    @Param('id') id: string,
    @Body() dto: UpdateServiceDto,
  ): Promise<ServiceDto> {
    return this.services.update(auth, id, dto);
  }

  @Post('services/:id/actions')
  @HttpCode(202)
  @RequireScopes('provisioning:write')
  @ApiOperation({
    summary: 'Suspend, resume, change the plan of, or terminate a service',
    description:
      'Answered 202 with the order; the service moves when it completes. activate: pending (after a failed ' +
      'activation); suspend: active; resume: suspended; change_plan (plan_id): not terminated; terminate: not ' +
      'terminated. 409 order_in_progress while another order of the service is open.',
  })
  @ApiEnvelope(OrderDto, { status: 202 })
  @ApiErrors(
    ...AUTH_ERRORS,
    ...BODY_ERRORS,
    ...IDEMPOTENCY_ERRORS,
    'not_found',
    'invalid_reference',
    'invalid_state_transition',
    'order_in_progress',
  )
  @ApiExampleBody(ServiceActionDto, { action: 'terminate', reason: 'Moved out of the coverage area' })
  @HonoursIfMatch()
  async actOnService(
    @Auth() auth: AuthContext,
    @Param('id') id: string,
    @Body() dto: ServiceActionDto,
  ): Promise<OrderDto> {
    return this.services.act(auth, id, dto);
  }
}
