import { Invoice } from '../invoices/invoice.entity';
import { byDueDate } from './allocate-payment.usecase';

const invoice = (id: string, dueDate: string, sequence: number | null): Invoice =>
  Object.assign(new Invoice(), { id, dueDate, sequence });

describe('byDueDate', () => {
  it('should put the oldest due date first, across a year end', () => {
    const sorted = [
      invoice('inv_a', '2026-01-05', 1),
      invoice('inv_b', '2025-12-31', 9),
      invoice('inv_c', '2026-01-04', 5),
    ].sort(byDueDate);
    expect(sorted.map((each) => each.id)).toEqual(['inv_b', 'inv_c', 'inv_a']);
  });

  it('should put the invoice issued first among those due the same day: its place in the series, then its id', () => {
    const sorted = [
      invoice('inv_a', '2026-03-15', 12),
      invoice('inv_b', '2026-03-15', 3),
      invoice('inv_d', '2026-03-15', 3),
      invoice('inv_c', '2026-03-15', 3),
    ].sort(byDueDate);
    expect(sorted.map((each) => each.id)).toEqual(['inv_b', 'inv_c', 'inv_d', 'inv_a']);
  });

  it('should compare sequences as numbers, not as text', () => {
    const sorted = [invoice('inv_a', '2026-03-15', 10), invoice('inv_b', '2026-03-15', 9)].sort(byDueDate);
    expect(sorted.map((each) => each.id)).toEqual(['inv_b', 'inv_a']);
  });

  it('should answer 0 only for the same invoice', () => {
    const one = invoice('inv_a', '2026-03-15', 1);
    expect(byDueDate(one, one)).toBe(0);
    expect(byDueDate(one, invoice('inv_b', '2026-03-15', 1))).toBeLessThan(0);
    expect(byDueDate(invoice('inv_b', '2026-03-15', 1), one)).toBeGreaterThan(0);
  });
});
