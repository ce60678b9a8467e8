import { Body, Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Auth, RequireScopes } from '../../common/auth/auth.decorators';
import type { AuthContext } from '../../common/request-context';
import {
  ApiEnvelope,
  ApiErrors,
  AUTH_ERRORS,
  BODY_ERRORS,
  IDEMPOTENCY_ERRORS,
} from '../../common/swagger/api-envelope';
import { ApiExampleBody } from '../../common/swagger/api-types';
import { DataCapWorker } from './data-cap-worker';
import { DataCapsService } from './data-caps.service';
import { CreateTopUpDto, DataCapDto, TopUpDto } from './dto/data-cap.dto';

@ApiTags('Network')
@ApiBearerAuth()
@Controller('api/v1/services')
export class DataCapsController {
  constructor(
    private readonly dataCaps: DataCapsService,
    private readonly worker: DataCapWorker,
  ) {}

  @Get(':id/data-cap')
  @RequireScopes('provisioning:read')
  @ApiOperation({
    summary: "A service's data cap this billing period",
    description:
      "Its usage this billing period (the subscriber's billing-day month, from RADIUS accounting), its plan's cap and " +
      "the period's top-ups, and what the cap does to it now (cap_state). A plan without a cap answers cap_bytes null.",
  })
  @ApiEnvelope(DataCapDto)
  @ApiErrors(...AUTH_ERRORS, 'not_found')
  getServiceDataCap(@Auth() auth: AuthContext, @Param('id') id: string): Promise<DataCapDto> {
    return this.dataCaps.state(auth.tenantId, id);
  }

  @Post(':id/top-ups')
  @HttpCode(201)
  @RequireScopes('provisioning:write', 'billing:write')
  @ApiOperation({
    summary: "Add bytes to a service's data cap for this billing period",
    description:
      'The bytes count for the current billing period only; the price is a pending charge of the subscriber ' +
      "(GET /subscribers/{id}/charges, source top_up) in the plan's currency, carried by its next invoice. A service " +
      'the cap throttles or blocks is restored once its usage is under the new allowance (a cap_restore order, ' +
      '`service.cap_restored`). Emits `service.cap_topped_up` (and `charge.created`). 409 `no_data_cap` when its ' +
      'plan has no cap; 422 `currency_mismatch` when the subscriber is billed in another currency. Take an ' +
      'idempotency key so a retry cannot charge twice.',
  })
  @ApiEnvelope(TopUpDto, { status: 201 })
  @ApiErrors(
    ...AUTH_ERRORS,
    ...BODY_ERRORS,
    ...IDEMPOTENCY_ERRORS,
    'not_found',
    'no_data_cap',
    'currency_mismatch',
    'invalid_state_transition',
  )
  @ApiExampleBody(CreateTopUpDto, { bytes: 10_000_000_000, price: 500, description: 'Data top-up 10 GB' })
  async createServiceTopUp(
    @Auth() auth: AuthContext,
    @Param('id') id: string,
    @Body() dto: CreateTopUpDto,
  ): Promise<TopUpDto> {
    const topUp = await this.dataCaps.topUp(auth, id, dto);
    this.worker.wake();
    return topUp;
  }
}
