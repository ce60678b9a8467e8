import { csvAnswer, type ExportPages } from './csv-answer';

const COLUMNS = [
  { header: 'id', value: (row: { id: string; amount: number }) => row.id },
  { header: 'amount', value: (row: { id: string; amount: number }) => row.amount },
];

/** Pages of `sizes` rows, numbered across pages, the cursor being the page's index. */
function pagesOf(sizes: number[], reads: string[] = []): ExportPages<{ id: string; amount: number }> {
  return (cursor) => {
    reads.push(cursor ?? 'first');
    const index = cursor === undefined ? 0 : Number(cursor);
    const before = sizes.slice(0, index).reduce((sum, size) => sum + size, 0);
    const items = Array.from({ length: sizes[index] }, (_, i) => ({
      id: `r${before + i}`,
      amount: -(before + i),
    }));
    return Promise.resolve({ items, next: index + 1 < sizes.length ? String(index + 1) : null });
  };
}

async function text(stream: NodeJS.ReadableStream): Promise<string> {
  let all = '';
  for await (const chunk of stream) {
    all += String(chunk);
  }
  return all;
}

describe('csvAnswer', () => {
  it('should name the attachment for the day and type it text/csv', async () => {
    const file = await csvAnswer('invoices', '2026-12-02', COLUMNS, pagesOf([0]));
    expect(file.getHeaders()).toEqual({
      type: 'text/csv; charset=utf-8',
      disposition: 'attachment; filename="invoices-20261202.csv"',
      length: undefined,
    });
  });

  it('should write the header, then every page in order, each read once', async () => {
    const reads: string[] = [];
    const file = await csvAnswer('ledger', '2026-12-02', COLUMNS, pagesOf([2, 1, 2], reads));
    expect(await text(file.getStream())).toBe('id,amount\r\nr0,0\r\nr1,-1\r\nr2,-2\r\nr3,-3\r\nr4,-4\r\n');
    expect(reads).toEqual(['first', '1', '2']);
  });

  it('should read the first page before answering, so its failure is the caller’s error', async () => {
    await expect(
      csvAnswer('subscribers', '2026-12-02', COLUMNS, () => Promise.reject(new Error('bad filter'))),
    ).rejects.toThrow('bad filter');
  });

  it('should read no page ahead of what the client takes beyond the one buffered', async () => {
    const reads: string[] = [];
    const file = await csvAnswer('subscribers', '2026-12-02', COLUMNS, pagesOf([1, 1, 1, 1, 1, 1], reads));
    const stream = file.getStream();
    const iterator = stream[Symbol.asyncIterator]();
    await iterator.next();
    expect(reads.length).toBeLessThanOrEqual(3);
    stream.destroy();
    await new Promise((resolve) => setImmediate(resolve));
    expect(reads.length).toBeLessThan(6);
  });
});
