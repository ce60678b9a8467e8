import { isId } from '../../common/ids';
import type { TaxedLines } from '../taxes/invoice-taxes';
import { InvoiceStatus } from './invoice.entity';
import { issuedStatus, newInvoice, type NewInvoice } from './invoice-issuer';

const NOW = new Date('2026-03-01T09:30:00.000Z');

const priced = (total: number): TaxedLines => ({
  lines: total === 0 ? [] : [{ description: 'x', quantity: 1, unit_amount: total, amount: total }],
  subtotal: total,
  taxAmount: 0,
  taxes: [],
  total,
});

const fields = (total: number, draft: boolean): NewInvoice => ({
  tenantId: 'ten_1',
  subscriberId: 'sub_1',
  currency: 'EUR',
  priced: priced(total),
  dueDate: '2026-03-15',
  draft,
});

describe('issuedStatus', () => {
  it('should open an invoice that owes something and pay one of 0 from the start', () => {
    expect(issuedStatus(1)).toBe(InvoiceStatus.Open);
    expect(issuedStatus(3100)).toBe(InvoiceStatus.Open);
    expect(issuedStatus(0)).toBe(InvoiceStatus.Paid);
  });
});

describe('newInvoice', () => {
  it('should issue an open invoice at once, finalized now and not yet numbered', () => {
    const invoice = newInvoice(fields(3100, false), NOW);
    expect(invoice).toMatchObject({
      tenantId: 'ten_1',
      subscriberId: 'sub_1',
      currency: 'EUR',
      status: InvoiceStatus.Open,
      number: null,
      sequence: null,
      total: 3100,
      amountPaid: 0,
      dueDate: '2026-03-15',
      finalizedAt: NOW,
      paidAt: null,
      voidedAt: null,
      createdAt: NOW,
      updatedAt: NOW,
    });
    expect(isId('inv', invoice.id)).toBe(true);
  });

  it('should issue an invoice of 0 paid at once', () => {
    expect(newInvoice(fields(0, false), NOW)).toMatchObject({
      status: InvoiceStatus.Paid,
      finalizedAt: NOW,
      paidAt: NOW,
    });
  });

  it('should keep a draft unissued, even one of 0', () => {
    for (const total of [0, 3100]) {
      expect(newInvoice(fields(total, true), NOW)).toMatchObject({
        status: InvoiceStatus.Draft,
        finalizedAt: null,
        paidAt: null,
      });
    }
  });
});
