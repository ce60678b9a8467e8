import type { EntryRow } from './statements.repository';
import { statementEntries } from './statements.service';

const row = (type: string, amount: string, fields: Partial<EntryRow> = {}): EntryRow => ({
  id: `led_${type}`,
  type,
  amount,
  source_id: `src_${type}`,
  created_at: new Date('2026-03-01T10:00:00.000Z'),
  invoice_number: null,
  transaction_reference: null,
  transaction_external_id: null,
  transaction_method: null,
  credit_note_number: null,
  ...fields,
});

describe('statementEntries', () => {
  it('should run the balance from the opening balance, a debit adding and a credit taking off', () => {
    const entries = statementEntries(
      [
        row('invoice', '3100', { invoice_number: 'INV-1' }),
        row('payment', '-5000', { transaction_reference: 'BANK-7' }),
        row('debit', '250'),
      ],
      1000,
    );
    expect(entries.map(({ debit, credit, balance }) => [debit, credit, balance])).toEqual([
      [3100, 0, 4100],
      [0, 5000, -900],
      [250, 0, -650],
    ]);
  });

  it('should answer no entries for no rows', () => {
    expect(statementEntries([], 1234)).toEqual([]);
  });

  it('should read amounts past 2^31 from their text exactly', () => {
    const [entry] = statementEntries([row('invoice', '9007199254740000')], 991);
    expect(entry.balance).toBe(Number.MAX_SAFE_INTEGER);
  });

  it("should name an entry by its credit note, invoice, transaction reference, external id, else its source's id", () => {
    const names = statementEntries(
      [
        row('credit', '-100', { credit_note_number: 'CN-1', transaction_reference: 'ignored' }),
        row('invoice_voided', '-3100', { invoice_number: 'INV-1' }),
        row('payment', '-10', { transaction_reference: 'REF', transaction_external_id: 'ext_1' }),
        row('refund', '10', { transaction_external_id: 'ext_2' }),
        row('write_off', '-5'),
      ],
      0,
    ).map(({ kind, reference, description }) => [kind, reference, description]);
    expect(names).toEqual([
      ['credit_note', 'CN-1', 'Credit note CN-1'],
      ['invoice_voided', 'INV-1', 'Invoice voided INV-1'],
      ['payment', 'REF', 'Payment REF'],
      ['refund', 'ext_2', 'Refund ext_2'],
      ['write_off', 'src_write_off', 'Write-off src_write_off'],
    ]);
  });

  it('should read a credit without a credit note as a credit, and say how a payment was made', () => {
    const [credit, payment] = statementEntries(
      [
        row('credit', '-100'),
        row('payment', '-10', { transaction_reference: 'R1', transaction_method: 'sepa' }),
      ],
      0,
    );
    expect(credit).toMatchObject({ kind: 'credit', description: 'Credit src_credit' });
    expect(payment).toMatchObject({
      kind: 'payment',
      description: 'Payment R1 (sepa)',
      date: '2026-03-01T10:00:00.000Z',
      source_id: 'src_payment',
    });
  });
});
