import { Injectable } from '@nestjs/common';
import { groupBy } from '../../common/group-by';
import type { Tx } from '../../database/transaction-runner';
import { Invoice, PAYABLE_STATUSES } from '../invoices/invoice.entity';
import { AllocatePaymentUseCase, byDueDate, type PlannedAllocation } from './allocate-payment.usecase';
import { Allocation, Transaction } from './transaction.entity';
import { TransactionsRepository } from './transactions.repository';

/** A subscriber's money and invoices in one currency. */
const accountOf = (row: { subscriberId: string; currency: string }): string =>
  `${row.subscriberId}\u0000${row.currency}`;

/** Oldest money first: when it was received, then its id. */
const byOccurred = (a: Transaction, b: Transaction): number =>
  a.occurredAt.getTime() - b.occurredAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/**
 * What auto-apply pays with what (one tenant's payable invoices and unapplied money): within each subscriber's
 * currency, the money oldest `occurred_at` first (then id), each to the invoices oldest due date first (then number),
 * until the money or what the invoices owe runs out. Answers the plans in the order the money is used; money that pays
 * nothing has none.
 */
export function autoApplyPlans(
  invoices: readonly Invoice[],
  money: readonly Transaction[],
): Map<Transaction, PlannedAllocation[]> {
  const invoicesOf = groupBy(invoices, accountOf);
  const plans = new Map<Transaction, PlannedAllocation[]>();
  for (const [account, funds] of groupBy(money, accountOf)) {
    const owed = [...(invoicesOf.get(account) ?? [])].sort(byDueDate);
    const left = new Map(owed.map((invoice) => [invoice, invoice.amountDue]));
    for (const transaction of funds.sort(byOccurred)) {
      let available = transaction.unallocatedAmount;
      const plan: PlannedAllocation[] = [];
      for (const invoice of owed) {
        const amount = Math.min(available, left.get(invoice)!);
        if (amount > 0) {
          plan.push({ invoice, amount });
          left.set(invoice, left.get(invoice)! - amount);
          available -= amount;
        }
      }
      if (plan.length > 0) {
        plans.set(transaction, plan);
      }
    }
  }
  return plans;
}

/**
 * Auto-apply when invoices are issued (docs/billing.md): the payments and credits a subscriber has not yet applied
 * pay the invoices just issued to it, in their currency, when its billing profile's `auto_apply` is on. Money on
 * receipt is AllocatePaymentUseCase.applyOldestFirst's (TransactionsService.create).
 */
@Injectable()
export class AutoApply {
  constructor(
    private readonly transactions: TransactionsRepository,
    private readonly allocator: AllocatePaymentUseCase,
  ) {}

  /**
   * Applies, in the caller's transaction, the unallocated payments and credits of the invoices' subscribers (those
   * whose profile has auto_apply on) to these just-issued invoices of the same currency: the money oldest
   * `occurred_at` first (then id), each to the invoices oldest due date first (then number). Set-wise: one statement
   * per tenant finds and locks the money (none in the common case), then four write the allocations, the money's and
   * the invoices' new amounts and the events of an explicit allocation (invoice.paid, transaction.allocated).
   *
   * The invoices must be written by the caller's transaction or locked by it; they are updated in place (amountPaid,
   * status, paidAt, updatedAt). The money's rows are locked here, so call it before posting the invoices to the ledger
   * (the balance row is always the last lock taken). Answers the allocations made.
   */
  async toIssuedInvoices(tx: Tx, invoices: Invoice[]): Promise<Allocation[]> {
    const payable = invoices.filter(
      (invoice) => PAYABLE_STATUSES.includes(invoice.status) && invoice.amountDue > 0,
    );
    const made: Allocation[] = [];
    for (const [tenantId, ofTenant] of groupBy(payable, (invoice) => invoice.tenantId)) {
      const accounts = [...groupBy(ofTenant, accountOf).values()].map(([first]) => first);
      const money = await this.transactions.lockAutoApplicable(tx.manager, tenantId, accounts);
      // In the order the money is used (all of it is locked already), so the allocations read in that order too.
      made.push(...(await this.allocator.applyPlans(tx, autoApplyPlans(ofTenant, money))));
    }
    return made;
  }
}
