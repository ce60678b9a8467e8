import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { Clock } from '../../common/clock';
import { endOfDay } from '../../common/dates';
import { ApiError } from '../../common/errors/api-error';
import { SubscribersService } from '../../subscribers';
import { BillingDocuments, type RenderedDocument } from '../documents/billing-documents';
import { renderStatementPdf } from '../documents/documents';
import { pdfEtag } from '../documents/pdf-canvas';
import { BillingProfilesRepository } from '../profiles/billing-profiles.repository';
import { type EntryRow, StatementsRepository } from './statements.repository';
import type { StatementDto, StatementEntryDto, StatementKind, StatementQueryDto } from './statement.dto';

/** The most entries one statement lists: a longer period is asked for in parts. */
export const MAX_STATEMENT_ENTRIES = 5_000;

const KIND_WORDS: Record<StatementKind, string> = {
  invoice: 'Invoice',
  invoice_voided: 'Invoice voided',
  payment: 'Payment',
  credit: 'Credit',
  credit_note: 'Credit note',
  debit: 'Debit',
  refund: 'Refund',
  write_off: 'Write-off',
};

/**
 * A statement's entries from its ledger rows (oldest first): each named by what it records (a credit that a credit note
 * issued reads as that credit note), a debit or a credit, with the running balance after it from `openingBalance`.
 */
export function statementEntries(rows: readonly EntryRow[], openingBalance: number): StatementEntryDto[] {
  let balance = openingBalance;
  return rows.map((row): StatementEntryDto => {
    const amount = Number(row.amount);
    balance += amount;
    const kind: StatementKind =
      row.type === 'credit' && row.credit_note_number !== null ? 'credit_note' : (row.type as StatementKind);
    const reference =
      row.credit_note_number ??
      row.invoice_number ??
      row.transaction_reference ??
      row.transaction_external_id ??
      row.source_id;
    return {
      date: row.created_at.toISOString(),
      kind,
      reference,
      description: `${KIND_WORDS[kind]} ${reference}${row.transaction_method ? ` (${row.transaction_method})` : ''}`,
      source_id: row.source_id,
      debit: amount > 0 ? amount : 0,
      credit: amount < 0 ? -amount : 0,
      balance,
    };
  });
}

/**
 * Statements of account (docs/billing.md, "Statements"): the ledger of one subscriber in one currency over a period,
 * with the balance before it, each entry's running balance, and the balance after it; read from ledger_entries (the
 * ledger's own figures, so they agree with GET /balance and /ledger), and named by the invoices, transactions and
 * credit notes they record.
 */
@Injectable()
export class StatementsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly subscribers: SubscribersService,
    private readonly documents: BillingDocuments,
    private readonly clock: Clock,
    private readonly rows: StatementsRepository,
    private readonly profiles: BillingProfilesRepository,
  ) {}

  async statement(tenantId: string, subscriberId: string, query: StatementQueryDto): Promise<StatementDto> {
    const { manager } = this.dataSource;
    await this.subscribers.getById(tenantId, subscriberId);
    const to = query.to ?? this.clock.today();
    if (query.from !== undefined && query.from > to) {
      throw new ApiError('invalid_query', `from (${query.from}) is after to (${to}).`, 'from');
    }
    const currency = query.currency ?? (await this.currencyOf(manager, tenantId, subscriberId));
    const end = endOfDay(to);
    const start = query.from !== undefined ? new Date(`${query.from}T00:00:00.000Z`) : null;
    const openingSum = start
      ? await this.rows.sumBefore(manager, tenantId, subscriberId, currency, start)
      : 0;
    const rows = await this.rows.entries(
      manager,
      tenantId,
      subscriberId,
      currency,
      start,
      end,
      MAX_STATEMENT_ENTRIES + 1,
    );
    if (rows.length > MAX_STATEMENT_ENTRIES) {
      throw new ApiError(
        'invalid_query',
        `The period holds more than ${MAX_STATEMENT_ENTRIES} entries; ask for a shorter one.`,
        'from',
      );
    }
    const openingBalance = openingSum;
    const entries = statementEntries(rows, openingBalance);
    const balance = entries.at(-1)?.balance ?? openingBalance;
    return {
      subscriber_id: subscriberId,
      currency,
      from: query.from ?? null,
      to,
      opening_balance: openingBalance,
      entries,
      total_debits: entries.reduce((sum, entry) => sum + entry.debit, 0),
      total_credits: entries.reduce((sum, entry) => sum + entry.credit, 0),
      closing_balance: balance,
    };
  }

  async statementPdf(
    tenantId: string,
    subscriberId: string,
    query: StatementQueryDto,
  ): Promise<RenderedDocument> {
    const { manager } = this.dataSource;
    const statement = await this.statement(tenantId, subscriberId, query);
    const voice = await this.documents.voice(manager, tenantId);
    const pdf = await renderStatementPdf({
      issuer: voice.issuer,
      customer: await this.documents.customer(manager, tenantId, subscriberId),
      title: 'Statement',
      issue_date: statement.to,
      period_from: statement.from ?? statement.entries[0]?.date.slice(0, 10) ?? statement.to,
      period_to: statement.to,
      currency: statement.currency,
      locale: voice.locale,
      time_zone: voice.timeZone,
      opening_balance: statement.opening_balance,
      entries: statement.entries.map((entry) => ({
        date: entry.date,
        kind: KIND_WORDS[entry.kind],
        reference: entry.reference,
        description: entry.description,
        debit: entry.debit,
        credit: entry.credit,
        balance: entry.balance,
      })),
      closing_balance: statement.closing_balance,
    });
    return {
      pdf,
      etag: pdfEtag(pdf),
      filename: `statement-${subscriberId}-${statement.from ?? 'start'}-${statement.to}.pdf`,
    };
  }

  /** The subscriber's billing profile's currency, else the one currency its ledger has; 422 when that is unclear. */
  private async currencyOf(manager: EntityManager, tenantId: string, subscriberId: string): Promise<string> {
    const profile = (await this.profiles.effectiveFor(manager, tenantId, [subscriberId])).get(subscriberId);
    if (profile) {
      return profile.currency;
    }
    const currencies = await this.rows.ledgerCurrencies(manager, tenantId, subscriberId);
    if (currencies.length > 1) {
      throw new ApiError(
        'invalid_query',
        `The subscriber has entries in ${currencies.join(', ')}: name one.`,
        'currency',
      );
    }
    if (currencies.length === 0) {
      throw new ApiError(
        'invalid_query',
        'The subscriber has no billing profile and no ledger entries: name the currency.',
        'currency',
      );
    }
    return currencies[0];
  }
}
