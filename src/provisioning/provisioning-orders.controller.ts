import { Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Auth, RequireScopes } from '../common/auth/auth.decorators';
import { RenderedPage } from '../common/envelope/envelope';
import type { AuthContext } from '../common/request-context';
import { ApiEnvelope, ApiErrors, AUTH_ERRORS, IDEMPOTENCY_ERRORS } from '../common/swagger/api-envelope';
import { ListOrdersQueryDto, OrderDto } from './dto/order.dto';
import { ProvisioningOrdersService } from './provisioning-orders.service';
import { HonoursIfMatch } from '../common/http/honours-if-match';

@ApiTags('Provisioning')
@ApiBearerAuth()
@Controller('api/v1/provisioning-orders')
export class ProvisioningOrdersController {
  constructor(private readonly orders: ProvisioningOrdersService) {}

  @Get()
  @RequireScopes('provisioning:read')
  @ApiOperation({
    description:
      'Lists provisioning orders (activate, suspend, resume, change plan, modify, terminate), newest first, filtered by service, subscriber, status or action, paginated by cursor. Read-only.',
    summary: 'List provisioning orders, newest first',
  })
  @ApiEnvelope(OrderDto, { list: true })
  @ApiErrors(...AUTH_ERRORS, 'invalid_query', 'invalid_cursor')
  async listProvisioningOrders(
    @Auth() auth: AuthContext,
    @Query() query: ListOrdersQueryDto,
  ): Promise<RenderedPage> {
    return this.orders.list(auth.tenantId, query);
  }

  @Get(':id')
  @RequireScopes('provisioning:read')
  @ApiOperation({
    description:
      'Returns one provisioning order: what it asks of the network, its status, the attempts made and the last error. 404 `not_found` for an unknown id.',
    summary: 'Get a provisioning order: its status, attempts and last error',
  })
  @ApiEnvelope(OrderDto)
  @ApiErrors(...AUTH_ERRORS, 'not_found')
  async getProvisioningOrder(@Auth() auth: AuthContext, @Param('id') id: string): Promise<OrderDto> {
    return OrderDto.from(await this.orders.get(auth.tenantId, id));
  }

  @Post(':id/cancel')
  @HttpCode(200)
  @RequireScopes('provisioning:write')
  @ApiOperation({
    summary: 'Cancel an order the worker has not taken yet',
    description: 'Only while acknowledged; 409 invalid_state_transition once in progress or ended.',
  })
  @ApiEnvelope(OrderDto)
  @ApiErrors(...AUTH_ERRORS, ...IDEMPOTENCY_ERRORS, 'not_found', 'invalid_state_transition')
  @HonoursIfMatch()
  async cancelProvisioningOrder(@Auth() auth: AuthContext, @Param('id') id: string): Promise<OrderDto> {
    return this.orders.cancel(auth, id);
  }
}
