import { Allocation } from '../../transactions/transaction.entity';
import { Invoice, InvoiceStatus } from '../invoice.entity';
import { InvoiceDto, lineDto } from './invoice-response.dto';

const AT = new Date('2026-03-01T09:30:00.000Z');

const invoice = (fields: Partial<Invoice> = {}): Invoice =>
  Object.assign(new Invoice(), {
    tenantId: 'ten_1',
    id: 'inv_1',
    number: 'INV-2026-000001',
    sequence: 1,
    subscriberId: 'sub_1',
    currency: 'EUR',
    status: InvoiceStatus.Open,
    lines: [],
    total: 1210,
    taxAmount: 210,
    taxes: [],
    amountPaid: 0,
    dueDate: '2026-03-15',
    finalizedAt: AT,
    paidAt: null,
    voidedAt: null,
    voidReason: null,
    writtenOffAt: null,
    writeOffReason: null,
    amountWrittenOff: null,
    createdAt: AT,
    updatedAt: AT,
    ...fields,
  });

describe('InvoiceDto.from', () => {
  it('should call an invoice overdue only from the day after its due date', () => {
    expect(InvoiceDto.from(invoice(), '2026-03-14').overdue).toBe(false);
    expect(InvoiceDto.from(invoice(), '2026-03-15').overdue).toBe(false);
    expect(InvoiceDto.from(invoice(), '2026-03-16').overdue).toBe(true);
    expect(InvoiceDto.from(invoice({ dueDate: '2025-12-31' }), '2026-01-01').overdue).toBe(true);
  });

  it('should call overdue only an invoice still owed', () => {
    const late = '2026-04-01';
    expect(
      InvoiceDto.from(invoice({ status: InvoiceStatus.PartiallyPaid, amountPaid: 10 }), late).overdue,
    ).toBe(true);
    for (const status of [
      InvoiceStatus.Draft,
      InvoiceStatus.Paid,
      InvoiceStatus.Void,
      InvoiceStatus.WrittenOff,
    ]) {
      expect(InvoiceDto.from(invoice({ status }), late).overdue).toBe(false);
    }
  });

  it('should show the subtotal, the amount due and the dates as the API writes them', () => {
    const dto = InvoiceDto.from(
      invoice({ status: InvoiceStatus.PartiallyPaid, amountPaid: 1000 }),
      '2026-03-01',
    );
    expect(dto).toMatchObject({
      subtotal: 1000,
      tax_amount: 210,
      total: 1210,
      amount_paid: 1000,
      amount_due: 210,
      finalized_at: '2026-03-01T09:30:00.000Z',
      paid_at: null,
      write_off_reason: null,
      amount_written_off: null,
    });
    expect(dto).not.toHaveProperty('allocations');
  });

  it('should show nothing due on a written-off invoice and what was written off', () => {
    const dto = InvoiceDto.from(
      invoice({
        status: InvoiceStatus.WrittenOff,
        amountPaid: 200,
        writtenOffAt: AT,
        writeOffReason: 'uncollectable',
        amountWrittenOff: 1010,
      }),
      '2026-04-01',
    );
    expect(dto).toMatchObject({ amount_due: 0, amount_written_off: 1010, written_off_at: AT.toISOString() });
  });

  it('should list the allocations when given, an allocation to the balance named so', () => {
    const allocation = Object.assign(new Allocation(), {
      id: 'alc_1',
      transactionId: 'txn_1',
      invoiceId: 'inv_1',
      amount: 500,
      currency: 'EUR',
      createdAt: AT,
    });
    expect(InvoiceDto.from(invoice(), '2026-03-01', [allocation]).allocations).toEqual([
      {
        id: 'alc_1',
        transaction_id: 'txn_1',
        invoice_id: 'inv_1',
        target: 'invoice',
        amount: 500,
        currency: 'EUR',
        created_at: AT.toISOString(),
      },
    ]);
  });
});

describe('lineDto', () => {
  it('should show a line issued before taxes existed as untaxed', () => {
    expect(lineDto({ description: 'Old', quantity: 2, unit_amount: 500, amount: 1000 })).toEqual({
      description: 'Old',
      quantity: 2,
      unit_amount: 500,
      amount: 1000,
      tax_rate_ids: [],
      net_amount: 1000,
      tax_amount: 0,
      taxes: [],
    });
  });

  it('should keep a taxed line as it was issued', () => {
    const taxed = {
      description: 'Fiber',
      quantity: 1,
      unit_amount: 1210,
      amount: 1210,
      plan_id: 'plan_1',
      tax_rate_ids: ['txr_1'],
      net_amount: 1000,
      tax_amount: 210,
      taxes: [],
    };
    expect(lineDto(taxed)).toEqual(taxed);
  });
});
