import { Clock } from '../common/clock';
import type { AppConfig } from '../config/app-config';
import { AccountingRetentionWorker } from './accounting-retention-worker';
import type { RadiusRepository } from './radius.repository';

class FixedClock extends Clock {
  protected override systemNow(): Date {
    return new Date('2026-12-01T00:00:00.000Z');
  }
}

/** A worker over a radacct holding `rows` closed sessions past any cutoff. */
function worker(retentionDays: number, batchSize: number, rows: number) {
  const calls: { cutoff: Date; limit: number }[] = [];
  let left = rows;
  const radius = {
    pruneAccounting: (cutoff: Date, limit: number) => {
      calls.push({ cutoff, limit });
      const deleted = Math.min(left, limit);
      left -= deleted;
      return Promise.resolve(deleted);
    },
  } as unknown as RadiusRepository;
  const config = {
    provisioning: {
      workerEnabled: true,
      radacct: { retentionDays, pruneBatchSize: batchSize, prunePollMs: 1000 },
    },
  } as AppConfig;
  return { worker: new AccountingRetentionWorker(config, radius, new FixedClock()), calls };
}

describe('AccountingRetentionWorker', () => {
  it('should delete batch after batch, sessions stopped before now − RADACCT_RETENTION_DAYS, until a batch comes back short', async () => {
    const { worker: retention, calls } = worker(90, 2, 5);
    expect(await retention.prune()).toBe(5);
    expect(calls).toHaveLength(3);
    expect(calls[0]).toEqual({ cutoff: new Date('2026-09-02T00:00:00.000Z'), limit: 2 });
  });

  it('should stop after a batch that deletes exactly nothing more', async () => {
    const { worker: retention, calls } = worker(30, 2, 4);
    expect(await retention.prune()).toBe(4);
    expect(calls).toHaveLength(3);
  });

  it('should prune nothing with RADACCT_RETENTION_DAYS=0', async () => {
    const { worker: retention, calls } = worker(0, 2, 5);
    expect(await retention.prune()).toBe(0);
    expect(calls).toEqual([]);
  });
});
