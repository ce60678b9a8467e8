import { Invoice, type InvoiceLine, InvoiceStatus, lineGross, lineNet } from './invoice.entity';

const line = (fields: Partial<InvoiceLine>): InvoiceLine => ({
  description: 'x',
  quantity: 1,
  unit_amount: 1210,
  amount: 1210,
  ...fields,
});

const invoice = (status: InvoiceStatus, total: number, amountPaid: number): Invoice =>
  Object.assign(new Invoice(), { status, total, amountPaid });

describe('invoice lines', () => {
  it('should read a line issued before taxes existed as untaxed: its amount is its net and its gross', () => {
    expect(lineNet(line({}))).toBe(1210);
    expect(lineGross(line({}))).toBe(1210);
  });

  it('should read an exclusive line as its net plus its tax', () => {
    const exclusive = line({ amount: 1000, net_amount: 1000, tax_amount: 210 });
    expect(lineNet(exclusive)).toBe(1000);
    expect(lineGross(exclusive)).toBe(1210);
  });

  it('should read an inclusive line as priced: its net and tax add up to its amount', () => {
    const inclusive = line({ amount: 1210, net_amount: 1000, tax_amount: 210 });
    expect(lineNet(inclusive)).toBe(1000);
    expect(lineGross(inclusive)).toBe(inclusive.amount);
  });

  it('should read a credit line with its tax given back', () => {
    expect(lineGross(line({ amount: -500, net_amount: -500, tax_amount: -105 }))).toBe(-605);
  });
});

describe('Invoice.amountDue', () => {
  it('should owe the total less what paid it', () => {
    expect(invoice(InvoiceStatus.Open, 3100, 0).amountDue).toBe(3100);
    expect(invoice(InvoiceStatus.PartiallyPaid, 3100, 1000).amountDue).toBe(2100);
    expect(invoice(InvoiceStatus.Paid, 3100, 3100).amountDue).toBe(0);
    expect(invoice(InvoiceStatus.Paid, 0, 0).amountDue).toBe(0);
  });

  it('should owe nothing once written off, whatever was left unpaid', () => {
    expect(invoice(InvoiceStatus.WrittenOff, 3100, 1000).amountDue).toBe(0);
  });
});
