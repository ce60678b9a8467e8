import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { ApiInteger, ApiMoney } from '../../../common/swagger/api-types';

@ApiSchema({ description: 'Open invoice amounts by days past due, in one currency.' })
export class AgingBucketsDto {
  @ApiProperty({ example: 'EUR' }) currency: string;
  @ApiMoney({ example: 6200, description: 'Not yet due on as_of.' }) current: number;
  @ApiMoney({ example: 6200, description: '1 to 30 days past due.' }) days_1_30: number;
  @ApiMoney({ example: 0, description: '31 to 60 days past due.' }) days_31_60: number;
  @ApiMoney({ example: 0, description: '61 to 90 days past due.' }) days_61_90: number;
  @ApiMoney({ example: 0, description: 'More than 90 days past due.' }) days_over_90: number;
  @ApiMoney({ example: 12400, description: 'Σ of the buckets: what the open invoices still ask.' })
  total_open: number;
  @ApiMoney({ example: 500, description: 'Payments and credits received and not applied to an invoice.' })
  unapplied_credit: number;
  @ApiMoney({
    example: 11900,
    signed: true,
    description: 'total_open − unapplied_credit: the ledger balance.',
  })
  net_receivable: number;
  @ApiInteger({ example: 2, description: 'Invoices open on as_of.' }) invoices: number;
}

@ApiSchema({ description: "One subscriber's aged receivables in one currency." })
export class AgingSubscriberDto extends AgingBucketsDto {
  @ApiProperty({ example: 'sub_01JD3Z6W3R4T5Y6U7I8O9P0QAB' }) subscriber_id: string;
}

@ApiSchema({ description: 'The totals per currency, with how many subscribers they cover.' })
export class AgingTotalDto extends AgingBucketsDto {
  @ApiInteger({ example: 120, description: 'Subscribers with an open amount or unapplied credit.' })
  subscribers: number;
}

@ApiSchema({
  description: 'Receivables aging on a day: per currency in total, and per subscriber (paged by id).',
})
export class AgingReportDto {
  @ApiProperty({ example: '2026-12-31' }) as_of: string;
  @ApiProperty({ type: [AgingTotalDto] }) totals: AgingTotalDto[];
  @ApiProperty({
    type: [AgingSubscriberDto],
    description: 'By subscriber id, then currency; `limit` subscribers.',
  })
  subscribers: AgingSubscriberDto[];
  @ApiProperty({ example: false }) has_more: boolean;
  @ApiProperty({
    example: null,
    nullable: true,
    type: String,
    maxLength: 64,
    description: 'The `starting_after` of the next page (a subscriber id); null on the last.',
  })
  next_cursor: string | null;
}
