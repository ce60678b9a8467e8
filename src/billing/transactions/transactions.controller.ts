import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
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
import { Auth, RequireScopes } from '../../common/auth/auth.decorators';
import { AllocatePaymentUseCase } from './allocate-payment.usecase';
import { AllocateDto, CreateTransactionDto, ListTransactionsQueryDto } from './dto/transaction.dto';
import { TransactionDto } from './dto/transaction-response.dto';
import { TransactionsService } from './transactions.service';
import { HonoursIfMatch } from '../../common/http/honours-if-match';

@ApiTags('Billing')
@ApiBearerAuth()
@Controller('api/v1/transactions')
export class TransactionsController {
  constructor(
    private readonly transactions: TransactionsService,
    private readonly allocatePayment: AllocatePaymentUseCase,
  ) {}

  @Get()
  @RequireScopes('billing:read')
  @ApiOperation({
    description:
      'Lists payments, credits, debits and refunds, newest first, filtered by subscriber, kind, source, external id or when they occurred, paginated by cursor. Read-only.',
    summary: 'List transactions (payments, credits, debits, refunds), newest first',
  })
  @ApiEnvelope(TransactionDto, { list: true })
  @ApiErrors(...AUTH_ERRORS, 'invalid_query', 'invalid_cursor')
  async listTransactions(
    @Auth() auth: AuthContext,
    @Query() query: ListTransactionsQueryDto,
  ): Promise<Page<TransactionDto>> {
    return (await this.transactions.list(auth.tenantId, query)).map((transaction) =>
      TransactionDto.from(transaction),
    );
  }

  @Post()
  @HttpCode(201)
  @RequireScopes('billing:write')
  @ApiOperation({
    summary: 'Record an external transaction or an adjustment',
    description:
      'A refund names refund_of (a payment) and may not exceed its unallocated, unrefunded remainder.',
  })
  @ApiEnvelope(TransactionDto, { status: 201 })
  @ApiErrors(
    ...AUTH_ERRORS,
    ...BODY_ERRORS,
    ...IDEMPOTENCY_ERRORS,
    'invalid_reference',
    'duplicate_transaction',
    'currency_mismatch',
    'refund_exceeds_refundable',
  )
  @ApiExampleBody(CreateTransactionDto, {
    subscriber_id: 'sub_01JD3Z6W3R4T5Y6U7I8O9P0QAB',
    kind: 'payment',
    source: 'external',
    amount: 4999,
    currency: 'USD',
    external_id: 'stripe:ch_3NfA1',
    method: 'card',
    metadata: { gateway: 'stripe' },
  })
  async createTransaction(
    @Auth() auth: AuthContext,
    @Body() dto: CreateTransactionDto,
  ): Promise<TransactionDto> {
    return this.transactions.create(auth, dto);
  }

  @Get(':transaction_id')
  @RequireScopes('billing:read')
  @ApiOperation({
    description:
      'Returns one transaction with its allocations and unallocated remainder, and its ETag. 404 `not_found` for an unknown id.',
    summary: 'Get a transaction with its allocations',
  })
  @ApiEnvelope(TransactionDto)
  @ApiErrors(...AUTH_ERRORS, 'not_found')
  async getTransaction(
    @Auth() auth: AuthContext,
    @Param('transaction_id') id: string,
  ): Promise<TransactionDto> {
    const { transaction, allocations } = await this.transactions.getById(auth.tenantId, id);
    return TransactionDto.from(transaction, allocations);
  }

  @Post(':transaction_id/allocate')
  @HttpCode(200)
  @RequireScopes('billing:write')
  @ApiOperation({
    summary: 'Allocate a payment or credit to invoices or to the balance',
    description:
      'One of: `{allocations:[{invoice_id, amount}]}`, `{target:"balance", amount}`, `{strategy:"oldest_first"}`. ' +
      'All or nothing; allocations are immutable.',
  })
  @ApiEnvelope(TransactionDto)
  @ApiErrors(
    ...AUTH_ERRORS,
    ...BODY_ERRORS,
    ...IDEMPOTENCY_ERRORS,
    'not_found',
    'invalid_reference',
    'invalid_state_transition',
    'allocation_exceeds_unallocated',
    'allocation_exceeds_amount_due',
    'currency_mismatch',
  )
  @ApiExampleBody(AllocateDto, { strategy: 'oldest_first' })
  @HonoursIfMatch()
  async allocateTransaction(
    @Auth() auth: AuthContext,
    @Param('transaction_id') id: string,
    @Body() dto: AllocateDto,
  ): Promise<TransactionDto> {
    return this.allocatePayment.execute(auth, id, dto);
  }
}
