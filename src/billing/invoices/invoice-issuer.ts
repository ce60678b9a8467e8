import { Injectable } from '@nestjs/common';
import { Clock } from '../../common/clock';
import { ApiError } from '../../common/errors/api-error';
import { newId } from '../../common/ids';
import { MAX_AMOUNT } from '../../common/money';
import type { Tx } from '../../database/transaction-runner';
import { EventsService, type EventType } from '../../events';
import { SubscribersService } from '../../subscribers';
import type { Charge } from '../charges/charge.entity';
import { chargesFitting } from '../charges/charge-line';
import { ChargesRepository } from '../charges/charges.repository';
import { LedgerEntryType } from '../ledger/ledger-entry.entity';
import { LedgerService } from '../ledger/ledger.service';
import { NumberingService } from '../numbering/numbering.service';
import { InvoiceTaxes, type TaxedLines } from '../taxes/invoice-taxes';
import { AutoApply } from '../transactions/auto-apply';
import type { Allocation } from '../transactions/transaction.entity';
import { InvoiceDto } from './dto/invoice-response.dto';
import { Invoice, type InvoiceLine, InvoiceStatus } from './invoice.entity';
import { InvoicesRepository } from './invoices.repository';
import { RevenueRepository } from '../reports/revenue.repository';

/** An issued invoice owes its total; one of total 0 owes nothing and is paid from the start. */
export function issuedStatus(total: number): InvoiceStatus {
  return total === 0 ? InvoiceStatus.Paid : InvoiceStatus.Open;
}

/** What a new invoice is made of: whose, in what currency, its taxed lines, when due, and whether a draft. */
export interface NewInvoice {
  tenantId: string;
  subscriberId: string;
  currency: string;
  priced: TaxedLines;
  dueDate: string;
  draft: boolean;
}

/** A new invoice's row, issued at `now` (a draft is neither issued nor numbered yet). */
export function newInvoice(fields: NewInvoice, now: Date): Invoice {
  const { priced, draft } = fields;
  const status = draft ? InvoiceStatus.Draft : issuedStatus(priced.total);
  return {
    id: newId('inv', now),
    tenantId: fields.tenantId,
    number: null,
    sequence: null,
    subscriberId: fields.subscriberId,
    currency: fields.currency,
    status,
    lines: priced.lines,
    total: priced.total,
    taxAmount: priced.taxAmount,
    taxes: priced.taxes,
    amountPaid: 0,
    dueDate: fields.dueDate,
    finalizedAt: draft ? null : now,
    paidAt: status === InvoiceStatus.Paid ? now : null,
    voidedAt: null,
    voidReason: null,
    createdAt: now,
    updatedAt: now,
  } as Invoice;
}

/**
 * The steps an invoice goes through when it is issued, whichever way (a manual invoice, a draft finalized, the
 * pending charges invoiced now): its lines taxed, the subscriber's pending charges taken, its number, and its
 * opening (announced, paid by unapplied money, posted to the ledger). The bill run issues its batches itself, set-based
 * (src/billing/runs/batch-biller.ts).
 */
@Injectable()
export class InvoiceIssuer {
  constructor(
    private readonly events: EventsService,
    private readonly subscribers: SubscribersService,
    private readonly ledger: LedgerService,
    private readonly invoices: InvoicesRepository,
    private readonly autoApply: AutoApply,
    private readonly charges: ChargesRepository,
    private readonly clock: Clock,
    private readonly taxes: InvoiceTaxes,
    private readonly numbering: NumberingService,
    private readonly revenue: RevenueRepository,
  ) {}

  /**
   * The lines taxed (InvoiceTaxes: the one computation), refused when the total with its taxes passes the largest
   * amount kept; `field` names what a caller would change.
   */
  async priced(
    tx: Tx,
    tenantId: string,
    subscriberId: string,
    lines: InvoiceLine[],
    field: string,
  ): Promise<TaxedLines> {
    const priced = await this.taxes.taxOrReject(tx.manager, tenantId, subscriberId, lines, field);
    if (!Number.isSafeInteger(priced.total) || priced.total > MAX_AMOUNT) {
      throw new ApiError(
        'validation_failed',
        "The invoice total with its taxes and the subscriber's pending charges exceeds the largest amount this API keeps.",
        field,
      );
    }
    return priced;
  }

  /** The invoice's number from the tenant's series, taken in the caller's transaction (gapless: a rollback gives it back). */
  async numbered(tx: Tx, invoice: Invoice): Promise<void> {
    if (invoice.number === null) {
      const { number, sequence } = await this.numbering.next(
        tx.manager,
        invoice.tenantId,
        'invoice',
        this.clock.today(),
      );
      invoice.number = number;
      invoice.sequence = sequence;
    }
    await this.taxes.markUsed(tx.manager, invoice.tenantId, invoice.lines);
  }

  /** The subscriber's pending charges in `currency` an invoice of `total` takes; the subscriber locked first. */
  async pendingFor(
    tx: Tx,
    tenantId: string,
    subscriberId: string,
    currency: string,
    total: number,
  ): Promise<Charge[]> {
    await this.subscribers.lockIn(tx.manager, tenantId, subscriberId);
    return chargesFitting(
      await this.charges.pendingOf(tx.manager, tenantId, [subscriberId], currency),
      total,
    );
  }

  /**
   * Writes a new invoice (newInvoice) and announces it; unless a draft, numbers it first, marks the pending charges
   * it carries invoiced and opens it. Answers the invoice and the allocations its opening made.
   */
  async insert(
    tx: Tx,
    row: Invoice,
    charges: Charge[],
  ): Promise<{ invoice: Invoice; applied: Allocation[] }> {
    const draft = row.status === InvoiceStatus.Draft;
    if (!draft) {
      await this.numbered(tx, row);
    }
    const invoice = await this.invoices.insert(tx.manager, row);
    await this.revenue.record(tx.manager, invoice.tenantId, { invoiceIds: [invoice.id] });
    await this.events.append(tx, {
      tenantId: invoice.tenantId,
      type: 'invoice.created',
      subjectId: invoice.id,
      object: InvoiceDto.from(invoice, this.clock.today()),
    });
    if (draft) {
      return { invoice, applied: [] };
    }
    await this.markInvoiced(tx, invoice, charges, row.createdAt);
    return { invoice, applied: await this.open(tx, invoice) };
  }

  /** The pending charges an issued invoice carries, marked invoiced by it. */
  async markInvoiced(tx: Tx, invoice: Invoice, charges: Charge[], at: Date): Promise<void> {
    await this.charges.markInvoiced(
      tx.manager,
      invoice.tenantId,
      [{ chargeIds: charges.map((charge) => charge.id), invoiceId: invoice.id, creditId: null }],
      at,
    );
  }

  /**
   * The invoice now counts as owed: it is announced, takes the subscriber's unapplied money (auto-apply: the
   * allocations made are answered) and enters the ledger. A draft being finalized is locked before that money, the
   * reverse of an allocation's order; only an allocation naming the draft itself could wait on it, and a deadlock
   * there is retried (docs/decisions.md, auto-apply).
   */
  async open(tx: Tx, invoice: Invoice): Promise<Allocation[]> {
    const types: EventType[] =
      invoice.status === InvoiceStatus.Paid ? ['invoice.finalized', 'invoice.paid'] : ['invoice.finalized'];
    for (const type of types) {
      await this.events.append(tx, {
        tenantId: invoice.tenantId,
        type,
        subjectId: invoice.id,
        object: InvoiceDto.from(invoice, this.clock.today()),
      });
    }
    // The money the subscriber has not applied yet pays it (auto-apply). Before the ledger posting: it locks that
    // money, and the balance row is always the last lock taken.
    const applied = await this.autoApply.toIssuedInvoices(tx, [invoice]);
    if (invoice.total > 0) {
      await this.ledger.post(tx.manager, {
        tenantId: invoice.tenantId,
        subscriberId: invoice.subscriberId,
        currency: invoice.currency,
        type: LedgerEntryType.Invoice,
        amount: invoice.total,
        sourceId: invoice.id,
      });
    }
    return applied;
  }
}
