import {
  formatPercentage,
  percentageMillionths,
  taxLine,
  taxSummary,
  TaxComputationError,
  type TaxRateInfo,
} from './tax-computation';

const rate = (id: string, percentage: string, options: Partial<TaxRateInfo> = {}): TaxRateInfo => ({
  id,
  name: id.toUpperCase(),
  percentage,
  inclusive: false,
  compound: false,
  ...options,
});

const inclusive = (each: TaxRateInfo): TaxRateInfo => ({ ...each, inclusive: true });

/** Issue 29 item 3: one line's net, taxes and gross, per line, half away from zero to the minor unit. */
describe('taxLine', () => {
  // [currency (minor units), rates, amount as priced exclusive, tax amounts, gross]
  const table: [string, TaxRateInfo[], number, number[], number][] = [
    // EUR (2 decimals): 21 % VAT on €49.99 → €10.4979, rounded to €10.50.
    ['EUR', [rate('vat', '21')], 4999, [1050], 6049],
    // Half a cent rounds away from zero: 5 % of €0.10 = 0.5 cent → 1 cent.
    ['EUR', [rate('vat', '5')], 10, [1], 11],
    ['EUR', [rate('vat', '7.5')], 2000, [150], 2150],
    // Two simple rates, each on the net.
    ['EUR', [rate('state', '6.25'), rate('city', '2.5')], 10000, [625, 250], 10875],
    // A compound rate on the net plus the simple tax (Quebec: GST 5 %, QST 9.975 % on top).
    ['EUR', [rate('gst', '5'), rate('qst', '9.975', { compound: true })], 10000, [500, 1047], 11547],
    // JPY (no decimals): 10 % consumption tax on ¥3,980 → ¥398; on ¥1,005 → 100.5 → ¥101.
    ['JPY', [rate('ct', '10')], 3980, [398], 4378],
    ['JPY', [rate('ct', '10')], 1005, [101], 1106],
    ['JPY', [rate('ct', '8')], 1, [0], 1],
    // KWD (3 decimals, fils): 5 % on 12.345 KWD → 0.61725 → 0.617.
    ['KWD', [rate('vat', '5')], 12345, [617], 12962],
    ['KWD', [rate('vat', '15')], 12345, [1852], 14197],
    // Four decimals of a percentage.
    ['EUR', [rate('x', '19.6875')], 100000, [19688], 119688],
    // No rates, and a 0 % rate.
    ['EUR', [], 4999, [], 4999],
    ['EUR', [rate('zero', '0')], 4999, [0], 4999],
  ];

  it.each(table)('%s %j on %i: exclusive taxes %j, gross %i', (_currency, rates, net, taxes, gross) => {
    const line = taxLine(net, rates);
    expect(line.taxes.map((each) => each.amount)).toEqual(taxes);
    expect(line).toMatchObject({ net, gross, tax: gross - net });
  });

  it.each(table)(
    '%s %j: the same line priced inclusive (%i net) splits into the same net and taxes',
    (_currency, rates, net, taxes, gross) => {
      const line = taxLine(gross, rates.map(inclusive));
      expect(line.taxes.map((each) => each.amount)).toEqual(taxes);
      expect(line).toMatchObject({ net, gross, tax: gross - net });
    },
  );

  it('should tax a credit line (negative) as the mirror of its debit', () => {
    for (const [, rates, net] of table) {
      const debit = taxLine(net, rates);
      const credit = taxLine(-net, rates);
      expect(credit.gross).toBe(-debit.gross);
      expect(credit.taxes.map((each) => each.amount)).toEqual(debit.taxes.map((each) => -each.amount || 0));
    }
  });

  it('should give every inclusive gross an exact split (net + taxes = gross) and the exclusive split when one exists', () => {
    let seed = 29;
    const random = (below: number) => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed % below;
    };
    const percentages = ['21', '5', '9.975', '10', '7.6543', '19', '0.5', '100'];
    for (let i = 0; i < 5_000; i += 1) {
      const count = 1 + random(3);
      const rates = Array.from({ length: count }, (_, index) =>
        rate(`r${index}`, percentages[random(percentages.length)], {
          compound: index > 0 && random(3) === 0,
        }),
      );
      const net = random(1_000_000) - 100_000;
      const exclusive = taxLine(net, rates);
      expect(exclusive.net + exclusive.tax).toBe(exclusive.gross);
      const back = taxLine(exclusive.gross, rates.map(inclusive));
      expect(back.net + back.tax).toBe(exclusive.gross);
      // Several nets can give one gross (a 100 % rate doubles, so 2n and 2n+1 are both reachable; others are not):
      // whichever is found, its taxes are the exclusive taxes of that net.
      expect(taxLine(back.net, rates).gross).toBe(exclusive.gross);
    }
  });

  it('should split a gross no net reaches with the odd unit in the net', () => {
    // 10 % exclusive: net 14 → 15 (tax 1.4 → 1), net 15 → 17 (tax 1.5 → 2); no integer net gives 16. Its tax is
    // that of the nearest net (15 → 2), and the net the rest.
    const line = taxLine(16, [inclusive(rate('vat', '10'))]);
    expect(line).toMatchObject({ net: 14, tax: 2, gross: 16 });
    // The rate is restated on that net, so tax rows and reports add up to the lines' nets.
    expect(line.taxes[0].taxable_amount).toBe(14);
  });

  it('should refuse more than three rates, a rate twice, and inclusive mixed with exclusive', () => {
    expect(() => taxLine(100, [rate('a', '1'), rate('b', '1'), rate('c', '1'), rate('d', '1')])).toThrow(
      TaxComputationError,
    );
    expect(() => taxLine(100, [rate('a', '1'), rate('a', '1')])).toThrow(TaxComputationError);
    expect(() => taxLine(100, [rate('a', '1'), inclusive(rate('b', '1'))])).toThrow(TaxComputationError);
  });
});

describe('percentages', () => {
  it.each([
    ['21', 210000n, '21.0000'],
    ['21.5', 215000n, '21.5000'],
    ['9.975', 99750n, '9.9750'],
    ['0.0001', 1n, '0.0001'],
    ['100', 1000000n, '100.0000'],
    ['0', 0n, '0.0000'],
  ])('%s is %i millionths, written %s', (input, millionths, written) => {
    expect(percentageMillionths(input)).toBe(millionths);
    expect(formatPercentage(input)).toBe(written);
  });

  it.each(['', '-1', '100.0001', '1.23456', '1e2', ' 21', '21.', '.5', 'abc', '1000'])(
    '%j is not a percentage',
    (input) => {
      expect(percentageMillionths(input)).toBeNull();
    },
  );
});

describe('taxSummary', () => {
  it('should sum each rate over the lines, the rows adding up to the lines to the minor unit', () => {
    const vat = rate('vat', '21');
    const reduced = rate('red', '10');
    const lines = [taxLine(4999, [vat]), taxLine(1001, [vat]), taxLine(333, [reduced]), taxLine(500, [])];
    const rows = taxSummary(lines);
    expect(rows).toEqual([
      expect.objectContaining({ tax_rate_id: 'vat', taxable_amount: 6000, amount: 1050 + 210 }),
      expect.objectContaining({ tax_rate_id: 'red', taxable_amount: 333, amount: 33 }),
    ]);
    const lineTax = lines.reduce((sum, line) => sum + line.tax, 0);
    expect(rows.reduce((sum, row) => sum + row.amount, 0)).toBe(lineTax);
  });
});
