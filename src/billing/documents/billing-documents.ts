import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { ApiError } from '../../common/errors/api-error';
import { TenantSettingsRepository } from '../../gateway';
import { SubscribersService } from '../../subscribers';
import { CreditNotesRepository } from '../credit-notes/credit-notes.repository';
import type { CreditNote } from '../credit-notes/credit-note.entity';
import { Invoice, InvoiceLine, InvoiceStatus, lineNet } from '../invoices/invoice.entity';
import { InvoicesRepository } from '../invoices/invoices.repository';
import type {
  CreditNoteDocument,
  DocumentCustomer,
  DocumentIssuer,
  DocumentLine,
  DocumentTaxRow,
  InvoiceDocument,
} from './document-model';
import { renderCreditNotePdf, renderInvoicePdf } from './documents';
import { pdfEtag } from './pdf-canvas';

/** A rendered document: its bytes, their strong ETag, and the file name to offer. */
export interface RenderedDocument {
  pdf: Buffer;
  etag: string;
  filename: string;
}

/** How the tenant's documents speak: its issuer block, locale and time zone (GET /tenant/settings). */
export interface DocumentVoice {
  issuer: DocumentIssuer;
  locale: string;
  timeZone: string;
}

function present(values: (string | null | undefined)[]): string[] {
  return values.filter((value): value is string => typeof value === 'string' && value.trim() !== '');
}

/** A line as the document shows it: its net (the amount before tax) and the rates it was taxed at. */
export function documentLine(line: InvoiceLine): DocumentLine {
  const net = lineNet(line);
  return {
    description: line.description,
    quantity: line.quantity,
    // A line priced tax-inclusive shows its net per unit when it is one unit; several units keep the price asked.
    unit_amount: line.quantity === 1 ? net : line.unit_amount,
    amount: net,
    taxes: (line.taxes ?? []).map((tax) => ({ name: tax.name, percentage: tax.percentage })),
    period: line.period_start && line.period_end ? { start: line.period_start, end: line.period_end } : null,
  };
}

function taxRows(
  rows: { name: string; percentage: string; taxable_amount: number; amount: number }[],
): DocumentTaxRow[] {
  return rows.map((row) => ({
    name: row.name,
    percentage: row.percentage,
    taxable_amount: row.taxable_amount,
    amount: row.amount,
  }));
}

/**
 * The billing documents as PDFs (docs/billing.md, "Documents"): the view models from the invoice or credit note, the
 * subscriber and the tenant's settings, rendered by documents.ts. The same record gives the same bytes (the document's
 * dates are its own), so the ETag is a hash of them.
 */
@Injectable()
export class BillingDocuments {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly invoices: InvoicesRepository,
    private readonly notes: CreditNotesRepository,
    private readonly tenantSettings: TenantSettingsRepository,
    private readonly subscribers: SubscribersService,
  ) {}

  async invoicePdf(tenantId: string, id: string): Promise<RenderedDocument> {
    const { manager } = this.dataSource;
    const invoice = await this.invoices.getById(manager, tenantId, id);
    if (invoice.status === InvoiceStatus.Draft || invoice.number === null) {
      throw new ApiError(
        'invalid_state_transition',
        'A draft has no document yet: finalize it (POST /invoices/{id}/finalize) to number and issue it.',
      );
    }
    const voice = await this.voice(manager, tenantId);
    const pdf = await renderInvoicePdf(await this.invoiceDocument(manager, invoice, voice));
    return { pdf, etag: pdfEtag(pdf), filename: `${invoice.number}.pdf` };
  }

  async creditNotePdf(tenantId: string, id: string): Promise<RenderedDocument> {
    const { manager } = this.dataSource;
    const note = await this.notes.getById(manager, tenantId, id);
    const invoice = await this.invoices.getById(manager, tenantId, note.invoiceId);
    const voice = await this.voice(manager, tenantId);
    const pdf = await renderCreditNotePdf(await this.creditNoteDocument(manager, note, invoice, voice));
    return { pdf, etag: pdfEtag(pdf), filename: `${note.number}.pdf` };
  }

  async invoiceDocument(
    manager: EntityManager,
    invoice: Invoice,
    voice: DocumentVoice,
  ): Promise<InvoiceDocument> {
    return {
      issuer: voice.issuer,
      customer: await this.customer(manager, invoice.tenantId, invoice.subscriberId),
      title: 'Invoice',
      number: invoice.number!,
      issue_date: invoice.finalizedAt ?? invoice.createdAt,
      due_date: invoice.dueDate,
      currency: invoice.currency,
      locale: voice.locale,
      time_zone: voice.timeZone,
      lines: invoice.lines.map(documentLine),
      tax_summary: taxRows(invoice.taxes),
      subtotal: invoice.total - invoice.taxAmount,
      total: invoice.total,
      amount_paid: invoice.amountPaid,
      amount_due: invoice.amountDue,
      notes:
        invoice.status === InvoiceStatus.Void
          ? `Void${invoice.voidReason ? `: ${invoice.voidReason}` : ''}`
          : null,
    };
  }

  async creditNoteDocument(
    manager: EntityManager,
    note: CreditNote,
    invoice: Invoice,
    voice: DocumentVoice,
  ): Promise<CreditNoteDocument> {
    return {
      issuer: voice.issuer,
      customer: await this.customer(manager, note.tenantId, note.subscriberId),
      title: 'Credit note',
      number: note.number,
      issue_date: note.createdAt,
      original_invoice_number: invoice.number ?? invoice.id,
      reason: note.reason,
      currency: note.currency,
      locale: voice.locale,
      time_zone: voice.timeZone,
      lines: note.lines.map(documentLine),
      tax_summary: taxRows(note.taxes),
      subtotal: note.total - note.taxAmount,
      total: note.total,
    };
  }

  /** The tenant's issuer block, locale and time zone; a tenant that set none is its name, en-US and UTC. */
  async voice(manager: EntityManager, tenantId: string): Promise<DocumentVoice> {
    const row = await this.tenantSettings.issuer(manager, tenantId);
    if (!row) {
      throw ApiError.notFound('tenant', tenantId);
    }
    return {
      issuer: {
        legal_name: row.legal_name ?? row.tenant_name,
        address_lines: present([
          row.address_line1,
          row.address_line2,
          present([row.address_postal_code, row.address_city]).join(' '),
          present([row.address_region, row.address_country]).join(', '),
        ]),
        tax_id: row.tax_id,
        registration_number: row.registration_number,
        contact: { email: row.contact_email, phone: row.contact_phone, web: row.contact_website },
        payment_instructions: row.payment_instructions,
        footer: row.invoice_footer,
      },
      locale: row.locale ?? 'en-US',
      timeZone: row.time_zone ?? 'UTC',
    };
  }

  /** The subscriber as billed: name, postal address, tax id and, when exempt, why. */
  async customer(manager: EntityManager, tenantId: string, subscriberId: string): Promise<DocumentCustomer> {
    const subscriber = await this.subscribers.findIn(manager, tenantId, subscriberId);
    const address = subscriber?.address ?? null;
    return {
      name: subscriber?.fullName ?? subscriberId,
      address_lines: present([
        address?.line1,
        present([address?.postal_code, address?.city]).join(' '),
        address?.state,
      ]),
      tax_id: subscriber?.taxId ?? null,
      tax_exempt_reason: subscriber?.taxExempt ? subscriber.taxExemptReason : null,
    };
  }
}
