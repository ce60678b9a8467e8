import type { InvoiceLine } from '../invoices/invoice.entity';
import { taxLines } from '../taxes/invoice-taxes';
import type { TaxRateInfo } from '../taxes/tax-computation';
import { CreditNoteProblem, planCreditNote } from './credit-note-lines';

const vat: TaxRateInfo = { id: 'txr_vat', name: 'VAT', percentage: '21', inclusive: false, compound: false };
const gst: TaxRateInfo = { id: 'txr_gst', name: 'GST', percentage: '5', inclusive: false, compound: false };
const qst: TaxRateInfo = {
  id: 'txr_qst',
  name: 'QST',
  percentage: '9.975',
  inclusive: false,
  compound: true,
};

function invoice(lines: { amount: number; rates: string[] }[]) {
  const raw: InvoiceLine[] = lines.map((line, index) => ({
    description: `Line ${index}`,
    quantity: 1,
    unit_amount: line.amount,
    amount: line.amount,
    tax_rate_ids: line.rates,
  }));
  return taxLines(raw, {
    exempt: false,
    defaults: [],
    plans: new Map(),
    charges: new Map(),
    rates: new Map([vat, gst, qst].map((rate) => [rate.id, rate])),
  });
}

/** Issue 29 item 7: credit notes taxed like the lines they reverse, never more than was invoiced. */
describe('planCreditNote', () => {
  const issued = invoice([
    { amount: 4999, rates: ['txr_vat'] },
    { amount: 10000, rates: ['txr_gst', 'txr_qst'] },
    { amount: 500, rates: [] },
  ]);

  it('should credit a whole line back to exactly its net and taxes', () => {
    for (const [index, line] of issued.lines.entries()) {
      const plan = planCreditNote(issued.lines, issued.total, [], { lines: [{ line: index }] });
      expect(plan.lines[0]).toMatchObject({
        invoice_line: index,
        net_amount: line.net_amount,
        tax_amount: line.tax_amount,
        amount: line.amount,
      });
      expect(plan.lines[0].taxes!.map((tax) => tax.amount)).toEqual(line.taxes!.map((tax) => tax.amount));
    }
  });

  it('should credit the whole invoice back to its subtotal, tax rows and total', () => {
    const plan = planCreditNote(issued.lines, issued.total, [], { amount: issued.total });
    expect(plan.total).toBe(issued.total);
    expect(plan.subtotal).toBe(issued.subtotal);
    expect(plan.taxes.map((row) => [row.tax_rate_id, row.amount])).toEqual(
      issued.taxes.map((row) => [row.tax_rate_id, row.amount]),
    );
  });

  it('should spread an amount over the lines so the parts add up to it, each taxed at its rates', () => {
    for (const amount of [1, 99, 1000, 5555, issued.total - 1]) {
      const plan = planCreditNote(issued.lines, issued.total, [], { amount });
      expect(plan.total).toBe(amount);
      expect(plan.subtotal + plan.taxAmount).toBe(amount);
      for (const line of plan.lines) {
        expect(line.net_amount! + line.tax_amount!).toBe(
          line.taxes!.length === 0 || line.taxes![0].inclusive ? line.amount : line.amount + line.tax_amount!,
        );
      }
    }
  });

  it('should give back exactly what a line was invoiced once all of it is credited in parts', () => {
    const inclusiveVat = { ...vat, id: 'txr_incl', inclusive: true };
    const priced = taxLines(
      [{ description: 'Fiber', quantity: 1, unit_amount: 1000, amount: 1000, tax_rate_ids: ['txr_incl'] }],
      {
        exempt: false,
        defaults: [],
        plans: new Map(),
        charges: new Map(),
        rates: new Map([['txr_incl', inclusiveVat]]),
      },
    );
    for (const [lines, total] of [
      [priced.lines, priced.total],
      [issued.lines, issued.total],
    ] as const) {
      for (const first of [1, 333, 500, 999]) {
        const part = planCreditNote(lines, total, [], { lines: [{ line: 0, amount: first }] });
        const rest = planCreditNote(lines, total, part.lines, { lines: [{ line: 0 }] });
        expect(part.subtotal + rest.subtotal).toBe(lines[0].net_amount);
        expect(part.taxAmount + rest.taxAmount).toBe(lines[0].tax_amount);
        // And in one request: a part, then the rest of the same line.
        const both = planCreditNote(lines, total, [], { lines: [{ line: 0, amount: first }, { line: 0 }] });
        expect([both.subtotal, both.taxAmount]).toEqual([lines[0].net_amount, lines[0].tax_amount]);
      }
    }
  });

  it('should refuse more than is left, counting earlier credit notes', () => {
    const first = planCreditNote(issued.lines, issued.total, [], { amount: issued.total - 100 });
    expect(() => planCreditNote(issued.lines, issued.total, first.lines, { amount: 101 })).toThrow(
      CreditNoteProblem,
    );
    const last = planCreditNote(issued.lines, issued.total, first.lines, { amount: 100 });
    expect(first.total + last.total).toBe(issued.total);
    expect(() =>
      planCreditNote(issued.lines, issued.total, [...first.lines, ...last.lines], { amount: 1 }),
    ).toThrow(expect.objectContaining({ code: 'credit_exceeds_invoice', field: 'amount' }));
  });

  it('should point at the line asked for that does not exist or has nothing left', () => {
    expect(() => planCreditNote(issued.lines, issued.total, [], { lines: [{ line: 3 }] })).toThrow(
      expect.objectContaining({ code: 'validation_failed', field: 'lines.0.line' }),
    );
    const whole = planCreditNote(issued.lines, issued.total, [], { lines: [{ line: 0 }] });
    expect(() =>
      planCreditNote(issued.lines, issued.total, whole.lines, { lines: [{ line: 0, amount: 1 }] }),
    ).toThrow(expect.objectContaining({ code: 'credit_exceeds_invoice', field: 'lines.0.amount' }));
  });
});
