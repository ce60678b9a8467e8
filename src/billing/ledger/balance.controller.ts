import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { RenderedPage } from '../../common/envelope/envelope';
import { PageQueryDto } from '../../common/pagination';
import type { AuthContext } from '../../common/request-context';
import { ApiEnvelope, ApiErrors, AUTH_ERRORS } from '../../common/swagger/api-envelope';
import { Auth, RequireScopes } from '../../common/auth/auth.decorators';
import { SubscribersService } from '../../subscribers';
import { LedgerEntryDto, SubscriberBalanceDto } from './dto/ledger.dto';
import { LedgerService } from './ledger.service';

@ApiTags('Billing')
@ApiBearerAuth()
@Controller('api/v1/subscribers/:id')
export class BalanceController {
  constructor(
    private readonly ledger: LedgerService,
    private readonly subscribers: SubscribersService,
  ) {}

  @Get('balance')
  @RequireScopes('billing:read')
  @ApiOperation({
    description:
      'Returns what a subscriber owes or has in credit, one figure per currency, computed from the ledger (invoices, payments, credits, refunds). 404 `not_found` for an unknown subscriber.',
    summary: "A subscriber's balance per currency",
  })
  @ApiEnvelope(SubscriberBalanceDto)
  @ApiErrors(...AUTH_ERRORS, 'not_found')
  async getSubscriberBalance(
    @Auth() auth: AuthContext,
    @Param('id') id: string,
  ): Promise<SubscriberBalanceDto> {
    await this.subscribers.getById(auth.tenantId, id);
    return { subscriber_id: id, balances: await this.ledger.balances(auth.tenantId, id) };
  }

  @Get('ledger')
  @RequireScopes('billing:read')
  @ApiOperation({
    description:
      "Lists a subscriber's ledger entries (invoices, payments, credits, debits, refunds), newest first, each with the running balance after it, paginated by cursor. 404 `not_found` for an unknown subscriber.",
    summary: "A subscriber's ledger, newest entry first, with the running balance",
  })
  @ApiEnvelope(LedgerEntryDto, { list: true })
  @ApiErrors(...AUTH_ERRORS, 'not_found', 'invalid_query', 'invalid_cursor')
  async listSubscriberLedgerEntries(
    @Auth() auth: AuthContext,
    @Param('id') id: string,
    @Query() query: PageQueryDto,
  ): Promise<RenderedPage> {
    await this.subscribers.getById(auth.tenantId, id);
    return this.ledger.list(auth.tenantId, id, query);
  }
}
