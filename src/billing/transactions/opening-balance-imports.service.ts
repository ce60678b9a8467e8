import { Injectable } from '@nestjs/common';
import { ApiError } from '../../common/errors/api-error';
import { isUniqueViolation } from '../../common/errors/postgres-errors';
import { eachRowInSavepoint, type RowResult } from '../../database/row-savepoints';
import type { Tx } from '../../database/transaction-runner';
import { type Subscriber, SubscribersService } from '../../subscribers';
import { InvoicesService } from '../invoices/invoices.service';
import { BillingProfilesService } from '../profiles/billing-profiles.service';
import { ImportOpeningBalanceDto } from './dto/opening-balance-import.dto';
import { TransactionKind, TransactionSource } from './transaction.entity';
import { TransactionsRepository } from './transactions.repository';
import { TransactionsService } from './transactions.service';

/** One validated row of an opening_balances import: its number in the file and its body. */
export interface OpeningBalanceImportRow {
  row: number;
  dto: ImportOpeningBalanceDto;
}

export type OpeningBalanceImportResult = RowResult<'created' | 'unchanged'>;

/** The external_id of a subscriber's opening balance in a currency: one each, so an import made twice posts once. */
export function openingBalanceExternalId(subscriberId: string, currency: string): string {
  return `opening_balance:${subscriberId}:${currency}`;
}

/**
 * Imports of opening balances (docs/imports.md; docs/decisions.md "Opening balances"), each row in its own savepoint
 * of the caller's transaction, through billing's own operations: what the subscriber owes is a debit transaction
 * (source adjustment) whose charge, untaxed, is issued at once on an invoice due after the billing profile's payment
 * terms, so the balance, dunning and auto-apply see it as any invoice; a credit is a credit transaction, applied to
 * open invoices as auto-apply says. Either is recorded with the external_id openingBalanceExternalId, unique per
 * tenant: a row imported again is unchanged when its amount is the one posted, and refused when it is another.
 */
@Injectable()
export class OpeningBalanceImportsService {
  constructor(
    private readonly transactions: TransactionsService,
    private readonly repository: TransactionsRepository,
    private readonly invoices: InvoicesService,
    private readonly profiles: BillingProfilesService,
    private readonly subscribers: SubscribersService,
  ) {}

  async importBatch(
    tx: Tx,
    tenantId: string,
    rows: readonly OpeningBalanceImportRow[],
  ): Promise<OpeningBalanceImportResult[]> {
    // Subscribers first (docs/decisions.md "One lock order"), in id order.
    const subscribers = new Map(
      (
        await this.subscribers.lockByExternalIds(tx.manager, tenantId, [
          ...new Set(rows.map(({ dto }) => dto.subscriber_external_id)),
        ])
      ).map((subscriber) => [subscriber.externalId!, subscriber]),
    );
    return eachRowInSavepoint(
      tx,
      'opening_balance_import_row',
      rows,
      ({ dto }) => this.importRow(tx, tenantId, dto, subscribers.get(dto.subscriber_external_id)),
      rowError,
    );
  }

  private async importRow(
    tx: Tx,
    tenantId: string,
    dto: ImportOpeningBalanceDto,
    subscriber: Subscriber | undefined,
  ): Promise<'created' | 'unchanged'> {
    if (!subscriber) {
      throw new ApiError(
        'invalid_reference',
        `No subscriber has external_id ${dto.subscriber_external_id}: import the subscribers first.`,
        'subscriber_external_id',
      );
    }
    const { manager } = tx;
    const profile = await this.profiles.profileFor(manager, tenantId, subscriber.billingProfileId);
    if (profile && profile.currency !== dto.currency) {
      throw new ApiError(
        'currency_mismatch',
        `Subscriber ${subscriber.id} is billed in ${profile.currency}; the opening balance is in ${dto.currency}.`,
        'currency',
      );
    }
    const externalId = openingBalanceExternalId(subscriber.id, dto.currency);
    const posted = await this.repository.findByExternalId(manager, tenantId, externalId);
    if (posted) {
      const amount = posted.kind === TransactionKind.Debit ? posted.amount : -posted.amount;
      if (amount === dto.amount) {
        return 'unchanged';
      }
      throw new ApiError(
        'duplicate_transaction',
        `The subscriber's ${dto.currency} opening balance of ${amount} was imported already (transaction ${posted.id}); correct it with a transaction, not a second opening balance.`,
        'amount',
      );
    }
    if (dto.amount === 0) {
      return 'unchanged';
    }
    const owed = dto.amount > 0;
    await this.transactions.recordIn(
      tx,
      tenantId,
      {
        subscriber_id: subscriber.id,
        kind: owed ? TransactionKind.Debit : TransactionKind.Credit,
        source: TransactionSource.Adjustment,
        amount: Math.abs(dto.amount),
        currency: dto.currency,
        external_id: externalId,
        description: dto.description ?? 'Opening balance',
        ...(dto.date !== undefined ? { occurred_at: `${dto.date}T00:00:00.000Z` } : {}),
      },
      // Untaxed: a balance brought from another system carried its taxes there.
      [],
    );
    if (owed) {
      await this.invoices.issuePending(tx, subscriber, dto.currency, profile?.paymentTermsDays ?? 0);
    }
    return 'created';
  }
}

/** A row's refusal in the row's columns (the subscriber by its external_id), or null when it is not one. */
function rowError(error: unknown): ApiError | null {
  if (isUniqueViolation(error, 'uq_transactions_external_id')) {
    return new ApiError(
      'duplicate_transaction',
      "Another import posted this subscriber's opening balance at the same time; import the row again.",
      'amount',
    );
  }
  if (!(error instanceof ApiError)) {
    return null;
  }
  return error.field === 'subscriber_id'
    ? new ApiError(error.code, error.message, 'subscriber_external_id')
    : error;
}
