import { lineDto } from '../invoices/dto/invoice-response.dto';
import { Controller, Get, Injectable, Param } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { ApiBearerAuth, ApiOperation, ApiProperty, ApiSchema, ApiTags } from '@nestjs/swagger';
import { DataSource } from 'typeorm';
import { Auth, RequireScopes } from '../../common/auth/auth.decorators';
import { Clock } from '../../common/clock';
import { addDays, addMonths } from '../../common/dates';
import type { AuthContext } from '../../common/request-context';
import { ApiEnvelope, ApiErrors, AUTH_ERRORS } from '../../common/swagger/api-envelope';
import { ApiMoney } from '../../common/swagger/api-types';
import { SubscribersService } from '../../subscribers';
import { InvoiceLineDto } from '../invoices/dto/invoice-response.dto';
import { BillingProfilesRepository } from '../profiles/billing-profiles.repository';
import { TransactionsRepository } from '../transactions/transactions.repository';
import { BillComputation, runDay } from './bill-computation';
import { BillingPeriodsRepository } from './billing-periods.repository';
import { MAX_AS_OF } from './dto/billing-run.dto';

@ApiSchema({
  description:
    "A preview of the subscriber's next invoice from its next bill run, if nothing changes until then: the plan lines, prorations and credits, its pending charges, and the unapplied money that will pay it.",
})
export class UpcomingInvoiceDto {
  @ApiProperty({ example: 'sub_01JD3Z6W3R4T5Y6U7I8O9P0QAB', description: 'The subscriber.' })
  subscriber_id: string;
  @ApiProperty({
    nullable: true,
    type: String,
    example: 'EUR',
    description:
      'ISO 4217 code of its billing profile; null when it has none (and no tenant default): it is not billed.',
  })
  currency: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    format: 'date',
    example: '2026-12-01',
    description:
      'The day of its next bill run (YYYY-MM-DD): its next billing day not billed yet; null when not billed.',
  })
  as_of: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    format: 'date',
    example: '2026-12-15',
    description: 'When that invoice would fall due (as_of + payment terms); null when not billed.',
  })
  due_date: string | null;
  @ApiProperty({ type: [InvoiceLineDto], description: 'The lines, as the invoice would carry them.' })
  lines: InvoiceLineDto[];
  @ApiMoney({
    example: 4999,
    signed: true,
    description: 'The sum of the lines, in minor units; below zero a credit would be issued instead.',
  })
  total: number;
  @ApiMoney({
    example: 500,
    description:
      'Payments and credits received and not yet applied (applied to the invoice when it is issued, when the profile auto-applies).',
  })
  credit_to_apply: number;
  @ApiMoney({ example: 4499, description: 'What would be left to pay: total − credit_to_apply, at least 0.' })
  amount_due: number;
}

/** GET /subscribers/{id}/upcoming-invoice: the bill run's own computation for one subscriber, written nowhere. */
@Injectable()
export class UpcomingInvoiceService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly clock: Clock,
    private readonly subscribers: SubscribersService,
    private readonly profiles: BillingProfilesRepository,
    private readonly periods: BillingPeriodsRepository,
    private readonly computation: BillComputation,
    private readonly transactions: TransactionsRepository,
  ) {}

  async preview(tenantId: string, subscriberId: string): Promise<UpcomingInvoiceDto> {
    const { manager } = this.dataSource;
    await this.subscribers.getById(tenantId, subscriberId);
    const profile = (await this.profiles.effectiveFor(manager, tenantId, [subscriberId])).get(subscriberId);
    const none: UpcomingInvoiceDto = {
      subscriber_id: subscriberId,
      currency: profile?.currency ?? null,
      as_of: null,
      due_date: null,
      lines: [],
      total: 0,
      credit_to_apply: 0,
      amount_due: 0,
    };
    if (!profile) {
      return none;
    }
    const today = this.clock.today();
    const thisMonth = `${today.slice(0, 8)}${String(profile.billingDay).padStart(2, '0')}`;
    let asOf = thisMonth >= today ? thisMonth : addMonths(thisMonth, 1);
    if (await this.periods.isBilled(manager, tenantId, subscriberId, asOf)) {
      asOf = addMonths(asOf, 1);
    }
    if (asOf > MAX_AS_OF) {
      // No run may bill past the last day a period and its due date fit before 9999-12-31: nothing comes.
      return none;
    }
    const [billed] = await this.computation.compute(manager, tenantId, runDay(asOf), [
      {
        subscriberId,
        currency: profile.currency,
        paymentTermsDays: profile.paymentTermsDays,
        billingDay: profile.billingDay,
      },
    ]);
    if ('error' in billed) {
      return { ...none, as_of: asOf, due_date: addDays(asOf, profile.paymentTermsDays) };
    }
    // What auto-apply would spend on it: money not applied yet, unless held for allocation by hand (or the profile
    // does not auto-apply).
    const credit = profile.autoApply
      ? await this.transactions.autoApplicableSum(manager, tenantId, subscriberId, profile.currency)
      : 0;
    const { lines, total } = billed.lines;
    return {
      ...none,
      as_of: asOf,
      due_date: addDays(asOf, profile.paymentTermsDays),
      lines: lines.map(lineDto),
      total,
      credit_to_apply: total > 0 ? Math.min(credit, total) : 0,
      amount_due: Math.max(0, total - credit),
    };
  }
}

@ApiTags('Billing')
@ApiBearerAuth()
@Controller('api/v1/subscribers/:id')
export class UpcomingInvoiceController {
  constructor(private readonly upcoming: UpcomingInvoiceService) {}

  @Get('upcoming-invoice')
  @RequireScopes('billing:read')
  @ApiOperation({
    description:
      "Previews the invoice the subscriber's next bill run would issue if nothing changes until then: each service's plan from its billed-through date to the next billing day, arrears and true-up credits, pending charges, and the money received and not yet applied that would pay it. Writes nothing. 404 `not_found` for an unknown subscriber.",
    summary: "Preview a subscriber's next invoice",
  })
  @ApiEnvelope(UpcomingInvoiceDto)
  @ApiErrors(...AUTH_ERRORS, 'not_found')
  async getUpcomingInvoice(@Auth() auth: AuthContext, @Param('id') id: string): Promise<UpcomingInvoiceDto> {
    return this.upcoming.preview(auth.tenantId, id);
  }
}
