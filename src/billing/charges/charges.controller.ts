import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Auth, RequireScopes } from '../../common/auth/auth.decorators';
import { Page } from '../../common/envelope/envelope';
import { HonoursIfMatch } from '../../common/http/honours-if-match';
import type { AuthContext } from '../../common/request-context';
import {
  ApiEnvelope,
  ApiErrors,
  AUTH_ERRORS,
  BODY_ERRORS,
  IDEMPOTENCY_ERRORS,
} from '../../common/swagger/api-envelope';
import { ApiExampleBody } from '../../common/swagger/api-types';
import { ChargesService } from './charges.service';
import { ChargeDto, CreateChargeDto, ListChargesQueryDto } from './dto/charge.dto';

@ApiTags('Billing')
@ApiBearerAuth()
@Controller('api/v1/subscribers/:id/charges')
export class ChargesController {
  constructor(private readonly charges: ChargesService) {}

  @Post()
  @HttpCode(201)
  @RequireScopes('billing:write')
  @ApiOperation({
    description:
      "Records a one-off charge as a pending invoice item: the next invoice issued to the subscriber in its currency (the bill run's, or a manual one) carries it as a line. With `invoice_now: true` an invoice is issued at once with it and the subscriber's other pending charges in that currency. Emits `charge.created`. 404 `not_found` for an unknown subscriber; 422 `currency_mismatch` when `currency` is not its billing profile's; 409 `invalid_state_transition` when it is archived. Take an idempotency key so a retry cannot charge twice.",
    summary: 'Charge a subscriber once (a pending invoice item)',
  })
  @ApiEnvelope(ChargeDto, { status: 201 })
  @ApiErrors(
    ...AUTH_ERRORS,
    ...BODY_ERRORS,
    ...IDEMPOTENCY_ERRORS,
    'not_found',
    'invalid_reference',
    'currency_mismatch',
    'invalid_state_transition',
  )
  @ApiExampleBody(CreateChargeDto, {
    description: 'Router TP-Link Archer C6',
    amount: 4900,
    currency: 'USD',
    quantity: 1,
  })
  async createSubscriberCharge(
    @Auth() auth: AuthContext,
    @Param('id') id: string,
    @Body() dto: CreateChargeDto,
  ): Promise<ChargeDto> {
    return this.charges.create(auth, id, dto);
  }

  @Get()
  @RequireScopes('billing:read')
  @ApiOperation({
    description:
      "Lists a subscriber's pending charges (or, with `status=invoiced`, those invoices carried), newest first, paginated by cursor. 404 `not_found` for an unknown subscriber.",
    summary: "A subscriber's pending charges",
  })
  @ApiEnvelope(ChargeDto, { list: true })
  @ApiErrors(...AUTH_ERRORS, 'not_found', 'invalid_query', 'invalid_cursor')
  async listSubscriberCharges(
    @Auth() auth: AuthContext,
    @Param('id') id: string,
    @Query() query: ListChargesQueryDto,
  ): Promise<Page<ChargeDto>> {
    return (await this.charges.list(auth, id, query)).map((charge) => ChargeDto.from(charge));
  }

  @Delete(':chargeId')
  @RequireScopes('billing:write')
  @ApiOperation({
    description:
      'Deletes a pending charge before any invoice carries it, and answers it as it was. Emits `charge.deleted`; honours If-Match. 404 `not_found` for an unknown subscriber or charge; 409 `invalid_state_transition` once invoiced.',
    summary: 'Delete a pending charge',
  })
  @ApiEnvelope(ChargeDto)
  @ApiErrors(...AUTH_ERRORS, 'not_found', 'invalid_state_transition')
  @HonoursIfMatch()
  async deleteSubscriberCharge(
    @Auth() auth: AuthContext,
    @Param('id') id: string,
    @Param('chargeId') chargeId: string,
  ): Promise<ChargeDto> {
    return this.charges.remove(auth, id, chargeId);
  }
}
