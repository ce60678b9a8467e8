import { utcDay } from '../../common/clock';
import { addDays, addMonths } from '../../common/dates';
import { newId } from '../../common/ids';
import type { NewEvent } from '../../events';
import { InvoiceDto } from '../invoices/dto/invoice-response.dto';
import { Invoice, InvoiceStatus } from '../invoices/invoice.entity';
import { LedgerEntryType } from '../ledger/ledger-entry.entity';
import type { LedgerRow } from '../ledger/ledger.repository';
import type { DocumentNumber } from '../numbering/numbering.service';
import { TransactionDto } from '../transactions/dto/transaction-response.dto';
import { Transaction, TransactionKind, TransactionSource } from '../transactions/transaction.entity';
import type { Billed, Computed, RunDay } from './bill-computation';
import { BillingPeriod, BillingRun, BillingRunItem } from './billing-run.entity';

/**
 * The rows a bill run's batch writes, built from what it computed (bill-computation.ts); BatchBiller writes them.
 * Pure: every id is made from `now`, the batch's one instant.
 */

/**
 * The billed periods the batch claims (exactly once per subscriber and period), each naming the invoice or the
 * credit it will be billed by, and the plan charges billed in advance (a later true-up's base).
 */
export function periodsOf(run: BillingRun, day: RunDay, billed: Computed[], now: Date): BillingPeriod[] {
  const periodEnd = addMonths(day.asOf, 1);
  return billed.map((each) =>
    Object.assign(new BillingPeriod(), {
      tenantId: run.tenantId,
      subscriberId: each.subscriber.subscriberId,
      periodStart: day.asOf,
      periodEnd,
      runId: run.id,
      invoiceId: each.lines.total >= 0 ? newId('inv', now) : null,
      creditId: each.lines.total < 0 ? newId('txn', now) : null,
      charges: each.lines.lines
        .filter((line) => line.plan_id !== undefined && line.period_start === day.asOf && line.amount > 0)
        .map((line) => ({ service_id: line.service_id!, plan_id: line.plan_id!, amount: line.amount })),
      createdAt: now,
    }),
  );
}

/** A claimed period's invoice, finalized at once under its reserved number (paid already when it owes nothing). */
export function invoiceOf(
  run: BillingRun,
  day: RunDay,
  period: BillingPeriod,
  { subscriber, lines }: Computed,
  reserved: DocumentNumber,
  now: Date,
): Invoice {
  const paid = lines.total === 0;
  return Object.assign(new Invoice(), {
    tenantId: run.tenantId,
    id: period.invoiceId!,
    number: reserved.number,
    sequence: reserved.sequence,
    subscriberId: period.subscriberId,
    currency: subscriber.currency,
    status: paid ? InvoiceStatus.Paid : InvoiceStatus.Open,
    lines: lines.lines,
    total: lines.total,
    taxAmount: lines.taxAmount,
    taxes: lines.taxes,
    amountPaid: 0,
    dueDate: addDays(day.asOf, subscriber.paymentTermsDays),
    finalizedAt: now,
    paidAt: paid ? now : null,
    voidedAt: null,
    voidReason: null,
    createdAt: now,
    updatedAt: now,
  });
}

/** A claimed period's credit: the subscriber's lines came to less than nothing (unused days already billed). */
export function creditOf(
  run: BillingRun,
  day: RunDay,
  period: BillingPeriod,
  { subscriber, lines }: Computed,
  now: Date,
): Transaction {
  return Object.assign(new Transaction(), {
    tenantId: run.tenantId,
    id: period.creditId!,
    subscriberId: period.subscriberId,
    kind: TransactionKind.Credit,
    source: TransactionSource.Adjustment,
    amount: -lines.total,
    currency: subscriber.currency,
    externalId: null,
    reference: run.id,
    description: `Bill run ${day.asOf}: credit for unused days already billed`,
    method: null,
    occurredAt: now,
    refundOf: null,
    metadata: { billing_run_id: run.id, period_start: day.asOf },
    allocatedAmount: 0,
    refundedAmount: 0,
    createdAt: now,
  });
}

/** The events of the batch's invoices (created, finalized, and paid when they owe nothing) and credits. */
export function eventsOf(
  tenantId: string,
  invoices: Invoice[],
  credits: Transaction[],
  now: Date,
): NewEvent[] {
  const events: NewEvent[] = [];
  for (const invoice of invoices) {
    const object = InvoiceDto.from(invoice, utcDay(now));
    const types =
      invoice.status === InvoiceStatus.Paid
        ? (['invoice.created', 'invoice.finalized', 'invoice.paid'] as const)
        : (['invoice.created', 'invoice.finalized'] as const);
    for (const type of types) {
      events.push({ tenantId, type, subjectId: invoice.id, object });
    }
  }
  for (const credit of credits) {
    events.push({
      tenantId,
      type: 'transaction.created',
      subjectId: credit.id,
      object: TransactionDto.from(credit),
    });
  }
  return events;
}

/** The ledger entries of the batch: what each invoice owes (a free one posts nothing) and each credit gives back. */
export function ledgerRowsOf(
  tenantId: string,
  invoices: Invoice[],
  credits: Transaction[],
  now: Date,
): LedgerRow[] {
  return [
    ...invoices
      .filter((invoice) => invoice.total > 0)
      .map((invoice) => ({
        id: newId('led', now),
        tenantId,
        subscriberId: invoice.subscriberId,
        currency: invoice.currency,
        type: LedgerEntryType.Invoice,
        amount: invoice.total,
        sourceId: invoice.id,
        createdAt: now,
      })),
    ...credits.map((credit) => ({
      id: newId('led', now),
      tenantId,
      subscriberId: credit.subscriberId,
      currency: credit.currency,
      type: LedgerEntryType.Credit,
      amount: -credit.amount,
      sourceId: credit.id,
      createdAt: now,
    })),
  ];
}

/** A run's record of what a subscriber was billed (or, dry, would be), or why not. */
export function itemOf(
  run: BillingRun,
  billed: Billed,
  invoiceId: string | null,
  creditId: string | null,
  at: Date,
): BillingRunItem {
  return Object.assign(new BillingRunItem(), {
    tenantId: run.tenantId,
    id: newId('bri', at),
    runId: run.id,
    subscriberId: billed.subscriber.subscriberId,
    currency: billed.subscriber.currency,
    lines: 'lines' in billed ? billed.lines.lines : [],
    total: 'lines' in billed ? billed.lines.total : 0,
    invoiceId,
    creditId,
    error: 'error' in billed ? billed.error : null,
    createdAt: at,
  });
}
