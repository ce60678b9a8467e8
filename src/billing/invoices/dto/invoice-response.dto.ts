import { MAX_DOCUMENT_NUMBER_LENGTH } from '../../../common/numbering-format';
import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { AllocationDto } from '../../transactions/dto/allocation.dto';
import { Allocation } from '../../transactions/transaction.entity';
import { INVOICE_STATUSES, Invoice, InvoiceLine, lineNet, PAYABLE_STATUSES } from '../invoice.entity';
import { ApiInteger, ApiMoney } from '../../../common/swagger/api-types';

@ApiSchema({
  description: 'One tax on one line: the rate as it was when the line was issued, what it taxed, the tax.',
})
export class LineTaxDto {
  @ApiProperty({ example: 'txr_01JD3Z6W3R4T5Y6U7I8O9P0QAB' }) tax_rate_id: string;
  @ApiProperty({ example: 'VAT' }) name: string;
  @ApiProperty({ example: '21.0000', description: 'Percent, 4 decimals.' }) percentage: string;
  @ApiProperty({ example: false, description: 'The line was priced with this tax included.' })
  inclusive: boolean;
  @ApiProperty({ example: false, description: "Applied on top of the line's other taxes." })
  compound: boolean;
  @ApiMoney({
    example: 4999,
    signed: true,
    description: 'What the rate applied to: the net, plus the other taxes for a compound rate.',
  })
  taxable_amount: number;
  @ApiMoney({
    example: 1050,
    signed: true,
    description: 'The tax, rounded half away from zero to the minor unit.',
  })
  amount: number;
}

@ApiSchema({ description: "One row of an invoice's tax summary: a rate over all the lines taxed at it." })
export class TaxSummaryRowDto extends LineTaxDto {}

@ApiSchema({ description: 'One line of an invoice: what is billed, how many, at what unit price.' })
export class InvoiceLineDto {
  @ApiProperty({ example: 'Fiber 500 — November' }) description: string;
  @ApiInteger({ example: 1, description: 'How many units are billed.' }) quantity: number;
  @ApiMoney({
    example: 4999,
    signed: true,
    description: 'Negative on a credit line (a bill run credits the unused days of a plan changed or ended).',
  })
  unit_amount: number;
  @ApiMoney({
    example: 4999,
    signed: true,
    description:
      "quantity × unit_amount, as priced: the net when the line's rates are exclusive, the gross when inclusive.",
  })
  amount: number;
  @ApiProperty({
    type: [String],
    example: ['txr_01JD3Z6W3R4T5Y6U7I8O9P0QAB'],
    description:
      "The rates the line is taxed at: the line's own (a manual invoice), else its charge's, its plan's, or the billing profile's defaults; none for a tax-exempt subscriber.",
  })
  tax_rate_ids: string[];
  @ApiMoney({ example: 4999, signed: true, description: 'The line without tax.' }) net_amount: number;
  @ApiMoney({ example: 1050, signed: true, description: "Σ of the line's taxes." }) tax_amount: number;
  @ApiProperty({ type: [LineTaxDto] }) taxes: LineTaxDto[];
  @ApiProperty({
    required: false,
    example: 'svc_01JD3Z6W3R4T5Y6U7I8O9P0QAB',
    description:
      'The service the line bills: on plan, proration and credit lines, and on charges of a service.',
  })
  service_id?: string;
  @ApiProperty({
    required: false,
    example: 'plan_01JD3Z6W3R4T5Y6U7I8O9P0QAB',
    description: 'The plan the line prices (plan, proration and credit lines).',
  })
  plan_id?: string;
  @ApiProperty({
    required: false,
    example: 'chg_01JD3Z6W3R4T5Y6U7I8O9P0QAB',
    description: 'The pending charge this line invoiced (GET /subscribers/{id}/charges).',
  })
  charge_id?: string;
  @ApiProperty({
    required: false,
    format: 'date',
    example: '2026-12-01',
    description: 'The first day the line bills (YYYY-MM-DD), on plan, proration and credit lines.',
  })
  period_start?: string;
  @ApiProperty({
    required: false,
    format: 'date',
    example: '2026-12-31',
    description: 'The last day the line bills, inclusive (YYYY-MM-DD).',
  })
  period_end?: string;
}

@ApiSchema({
  description: 'A bill to a subscriber: its lines, totals, status, due date and what has paid it.',
})
export class InvoiceDto {
  @ApiProperty({ example: 'inv_01JD3Z6W3R4T5Y6U7I8O9P0QAB' }) id: string;
  @ApiProperty({
    type: String,
    nullable: true,
    maxLength: MAX_DOCUMENT_NUMBER_LENGTH,
    example: 'INV-2026-000042',
    description:
      "The document number from the tenant's invoice series (GET /tenant/settings, numbering), given when the invoice is issued; null while a draft.",
  })
  number: string | null;
  @ApiInteger({
    nullable: true,
    example: 42,
    minimum: 1,
    description: "The number's place in its series, gapless; null while a draft.",
  })
  sequence: number | null;
  @ApiProperty({ example: 'sub_01JD3Z6W3R4T5Y6U7I8O9P0QAB', description: 'The subscriber billed.' })
  subscriber_id: string;
  @ApiProperty({ example: 'USD', description: 'ISO 4217 code of every amount on this invoice.' })
  currency: string;
  @ApiProperty({
    enum: INVOICE_STATUSES,
    description:
      'draft (not yet owed) → open → partially_paid → paid as allocations reach the total; void while nothing is allocated; written_off when what was still due is written off as uncollectable (owed no more, takes no allocations).',
  })
  status: string;
  @ApiProperty({ type: [InvoiceLineDto] }) lines: InvoiceLineDto[];
  @ApiMoney({
    example: 4999,
    signed: true,
    description:
      "Σ of the lines' nets, in minor units of `currency`; below 0 when a bill run's credits outweigh the charges it taxes.",
  })
  subtotal: number;
  @ApiProperty({ type: [TaxSummaryRowDto], description: 'One row per rate: what it taxed and the tax.' })
  taxes: TaxSummaryRowDto[];
  @ApiMoney({
    example: 1050,
    signed: true,
    description: 'Σ of the taxes (below 0 when credits carry more tax).',
  })
  tax_amount: number;
  @ApiMoney({
    example: 6049,
    description:
      'subtotal + tax_amount: what the invoice owes, in minor units of `currency`; fixed at issue.',
  })
  total: number;
  @ApiMoney({
    example: 2500,
    description: 'What allocated payments and credits have covered so far, in minor units of `currency`.',
  })
  amount_paid: number;
  @ApiMoney({
    example: 2499,
    description:
      'total − amount_paid, in minor units of `currency`; falls with each allocation, 0 once paid or written off (what was written off: amount_written_off).',
  })
  amount_due: number;
  @ApiProperty({ example: '2026-12-15', description: 'YYYY-MM-DD; past it, an unpaid invoice is overdue.' })
  due_date: string;
  @ApiProperty({ example: false, description: 'Open or partially paid, and past its due date.' })
  overdue: boolean;
  @ApiProperty({
    nullable: true,
    type: String,
    description: 'When the invoice was opened (at creation, or by /finalize); null while a draft.',
  })
  finalized_at: string | null;
  @ApiProperty({ nullable: true, type: String, description: 'When amount_due reached 0; null until paid.' })
  paid_at: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    description: 'When the invoice was voided; null unless void.',
  })
  voided_at: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    example: null,
    description:
      'Why the invoice was voided (the `reason` of POST /invoices/{id}/void); null when none was given.',
  })
  void_reason: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    example: null,
    description:
      'When what was due was written off (POST /invoices/{id}/write-off); null unless written_off.',
  })
  written_off_at: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    example: null,
    maxLength: 500,
    description: 'Why the invoice was written off, as the write-off gave it; null unless written_off.',
  })
  write_off_reason: string | null;
  @ApiMoney({
    nullable: true,
    example: null,
    description:
      'What was written off: the amount due at that moment (total − amount_paid then), in minor units of `currency`; null unless written_off.',
  })
  amount_written_off: number | null;
  @ApiProperty({ example: '2026-11-21T10:00:00.000Z' }) created_at: string;
  @ApiProperty({ example: '2026-11-21T10:00:00.000Z' }) updated_at: string;
  @ApiProperty({ type: [AllocationDto], required: false, description: 'On GET /invoices/{id}.' })
  allocations?: AllocationDto[];

  /** `today` (the caller's Clock.today(), YYYY-MM-DD) is what `overdue` is measured against. */
  static from(invoice: Invoice, today: string, allocations?: Allocation[]): InvoiceDto {
    return {
      id: invoice.id,
      number: invoice.number,
      sequence: invoice.sequence,
      subscriber_id: invoice.subscriberId,
      currency: invoice.currency,
      status: invoice.status,
      lines: invoice.lines.map(lineDto),
      subtotal: invoice.total - invoice.taxAmount,
      taxes: invoice.taxes,
      tax_amount: invoice.taxAmount,
      total: invoice.total,
      amount_paid: invoice.amountPaid,
      amount_due: invoice.amountDue,
      due_date: invoice.dueDate,
      overdue: PAYABLE_STATUSES.includes(invoice.status) && invoice.dueDate < today,
      finalized_at: invoice.finalizedAt?.toISOString() ?? null,
      paid_at: invoice.paidAt?.toISOString() ?? null,
      voided_at: invoice.voidedAt?.toISOString() ?? null,
      void_reason: invoice.voidReason,
      written_off_at: invoice.writtenOffAt?.toISOString() ?? null,
      write_off_reason: invoice.writeOffReason ?? null,
      amount_written_off: invoice.amountWrittenOff ?? null,
      created_at: invoice.createdAt.toISOString(),
      updated_at: invoice.updatedAt.toISOString(),
      ...(allocations ? { allocations: allocations.map(AllocationDto.from) } : {}),
    };
  }
}

/** A line as the API shows it: a line issued before taxes existed reads as untaxed. */
export function lineDto(line: InvoiceLine): InvoiceLineDto {
  return {
    ...line,
    tax_rate_ids: line.tax_rate_ids ?? [],
    net_amount: lineNet(line),
    tax_amount: line.tax_amount ?? 0,
    taxes: line.taxes ?? [],
  };
}
