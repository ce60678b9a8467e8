import { Batcher } from './batcher';

describe('Batcher', () => {
  it('should run the items submitted in one turn as one batch, answering each caller its own result', async () => {
    const runs: number[][] = [];
    const batcher = new Batcher<number, number>((items) => {
      runs.push(items);
      return Promise.resolve(items.map((item) => item * 10));
    });
    const first = await Promise.all([1, 2, 3].map((item) => batcher.submit(item)));
    const second = await batcher.submit(4);
    expect(first).toEqual([10, 20, 30]);
    expect(second).toBe(40);
    expect(runs).toEqual([[1, 2, 3], [4]]);
  });

  it('should gather the items submitted by callers woken by one promise after awaits of their own', async () => {
    const runs: string[][] = [];
    const batcher = new Batcher<string, string>((items) => {
      runs.push(items);
      return Promise.resolve(items);
    });
    const gate = Promise.resolve();
    const caller = async (name: string, awaits: number) => {
      await gate;
      for (let i = 0; i < awaits; i++) {
        await Promise.resolve();
      }
      return batcher.submit(name);
    };
    await Promise.all([caller('a', 0), caller('b', 3), caller('c', 10)]);
    expect(runs).toEqual([['a', 'b', 'c']]);
  });

  it('should reject every caller of a batch whose run throws, and run the next batch', async () => {
    let fail = true;
    const batcher = new Batcher<number, number>((items) =>
      fail ? Promise.reject(new Error('down')) : Promise.resolve(items),
    );
    const failed = await Promise.allSettled([batcher.submit(1), batcher.submit(2)]);
    expect(failed.map((result) => result.status)).toEqual(['rejected', 'rejected']);
    fail = false;
    await expect(batcher.submit(3)).resolves.toBe(3);
  });
});
