import { ApiProperty, OmitType, PickType } from '@nestjs/swagger';
import { PageQueryDto } from '../../common/pagination';
import { IsTrimmedText } from '../../common/validation/text';
import { ListInvoicesQueryDto, ListTransactionsQueryDto } from '../../billing';
import { ListSubscribersQueryDto } from '../../subscribers';

/**
 * An export takes its list's filters, the list's own DTO less its page parameters: an export is every row the filters
 * match, so `limit` and `starting_after` are undeclared there and refused (400 invalid_query) like any other.
 */
const PAGE_ONLY = ['limit', 'starting_after'] as const;

export class ExportSubscribersQueryDto extends OmitType(ListSubscribersQueryDto, PAGE_ONLY) {}

export class ExportInvoicesQueryDto extends OmitType(ListInvoicesQueryDto, PAGE_ONLY) {}

export class ExportTransactionsQueryDto extends OmitType(ListTransactionsQueryDto, PAGE_ONLY) {}

/** One subscriber's ledger (GET /subscribers/{id}/ledger's rows), with its list's created_gte and created_lt. */
export class ExportLedgerQueryDto extends PickType(PageQueryDto, ['created_gte', 'created_lt'] as const) {
  @ApiProperty({
    example: 'sub_01JD3Z6W3R4T5Y6U7I8O9P0QAB',
    description: 'The subscriber whose ledger is exported.',
  })
  @IsTrimmedText(64)
  subscriber_id: string;
}
