import { Injectable, StreamableFile } from '@nestjs/common';
import { Clock } from '../common/clock';
import type { Page, RenderedPage } from '../common/envelope/envelope';
import {
  InvoiceDto,
  InvoicesService,
  LedgerService,
  TransactionDto,
  TransactionsService,
  type LedgerEntryDto,
} from '../billing';
import { SubscribersService, type SubscriberDto } from '../subscribers';
import { INVOICE_COLUMNS, LEDGER_COLUMNS, SUBSCRIBER_COLUMNS, TRANSACTION_COLUMNS } from './columns';
import { csvAnswer, EXPORT_PAGE_SIZE, type ExportPage } from './csv-answer';
import type {
  ExportInvoicesQueryDto,
  ExportLedgerQueryDto,
  ExportSubscribersQueryDto,
  ExportTransactionsQueryDto,
} from './dto/export-query.dto';

/** The list query of one page of an export: its filters, the export's page size, after `cursor`. */
const pageOf = <Q extends object>(query: Q, cursor: string | undefined) => ({
  ...query,
  limit: EXPORT_PAGE_SIZE,
  starting_after: cursor,
});

/** A page Postgres rendered as JSON (the long lists): its items parsed, one page at a time. */
function rendered<T>(page: RenderedPage): { items: T[]; next: string | null } {
  return { items: JSON.parse(page.itemsJson) as T[], next: page.pagination.next_cursor };
}

function mapped<E, T>(page: Page<E>, toDto: (entity: E) => T): ExportPage<T> {
  return { items: page.items.map(toDto), next: page.pagination.next_cursor };
}

/**
 * The CSV exports: each walks its list (the same service method, hence the same filters and order: newest first by
 * created_at, id) in pages of EXPORT_PAGE_SIZE, each page its own statement (docs/exports.md: no one snapshot).
 */
@Injectable()
export class ExportsService {
  constructor(
    private readonly subscribers: SubscribersService,
    private readonly invoices: InvoicesService,
    private readonly transactions: TransactionsService,
    private readonly ledger: LedgerService,
    private readonly clock: Clock,
  ) {}

  subscribersCsv(tenantId: string, query: ExportSubscribersQueryDto): Promise<StreamableFile> {
    // Postgres writes the records (no row becomes an object here); a search, or a page with a value it would write
    // otherwise than csv-write (SUBSCRIBER_CSV's `exact`), is written here from the list's JSON items.
    return csvAnswer('subscribers', this.clock.today(), SUBSCRIBER_COLUMNS, async (cursor) => {
      const pageQuery = pageOf(query, cursor);
      const csv = await this.subscribers.csvPage(tenantId, pageQuery);
      if (csv?.exact) {
        return { chunks: csv.chunks, next: csv.next_cursor };
      }
      return rendered<SubscriberDto>(await this.subscribers.list(tenantId, pageQuery));
    });
  }

  invoicesCsv(tenantId: string, query: ExportInvoicesQueryDto): Promise<StreamableFile> {
    // One `today` for the whole file: every row's `overdue` is measured against the same day.
    const today = this.clock.today();
    return csvAnswer('invoices', today, INVOICE_COLUMNS, async (cursor) =>
      mapped(await this.invoices.list(tenantId, pageOf(query, cursor)), (invoice) =>
        InvoiceDto.from(invoice, today),
      ),
    );
  }

  transactionsCsv(tenantId: string, query: ExportTransactionsQueryDto): Promise<StreamableFile> {
    return csvAnswer('transactions', this.clock.today(), TRANSACTION_COLUMNS, async (cursor) =>
      mapped(await this.transactions.list(tenantId, pageOf(query, cursor)), (transaction) =>
        TransactionDto.from(transaction),
      ),
    );
  }

  /** One subscriber's ledger: 404 not_found for a subscriber the tenant does not have, as its list answers. */
  async ledgerCsv(tenantId: string, query: ExportLedgerQueryDto): Promise<StreamableFile> {
    const { subscriber_id: subscriberId, ...range } = query;
    await this.subscribers.getById(tenantId, subscriberId);
    return csvAnswer('ledger', this.clock.today(), LEDGER_COLUMNS, async (cursor) => {
      const page = rendered<LedgerEntryDto>(
        await this.ledger.list(tenantId, subscriberId, pageOf(range, cursor)),
      );
      return { ...page, items: page.items.map((entry) => ({ ...entry, subscriber_id: subscriberId })) };
    });
  }
}
