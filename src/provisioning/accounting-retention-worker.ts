import { Inject, Injectable } from '@nestjs/common';
import { Clock } from '../common/clock';
import { PolledWorker } from '../common/polled-worker';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { RadiusRepository } from './radius.repository';

const DAY_MS = 86_400_000;

/**
 * radacct's retention (issue 33, accounting at scale): every RADACCT_PRUNE_POLL_MS, deletes the sessions that stopped
 * more than RADACCT_RETENTION_DAYS ago, RADACCT_PRUNE_BATCH_SIZE rows per statement (oldest first) until none is
 * left, so a delete never holds many locks or one long transaction beside FreeRADIUS's writes. Open sessions are never
 * deleted; the daily usage (radacct_daily_usage) is kept, so `GET /services/{id}/usage` still answers for the pruned
 * days. Off with RADACCT_RETENTION_DAYS=0. Instances may all run it: each skips the rows another is deleting.
 */
@Injectable()
export class AccountingRetentionWorker extends PolledWorker {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly radius: RadiusRepository,
    private readonly clock: Clock,
  ) {
    super('AccountingRetentionWorker', 'radacct retention pass failed');
  }

  protected pollMs(): number | null {
    const { workerEnabled, radacct } = this.config.provisioning;
    return workerEnabled && radacct.retentionDays > 0 ? radacct.prunePollMs : null;
  }

  protected async pass(): Promise<void> {
    await this.prune();
  }

  /** Deletes every closed session past the retention, batch by batch; answers how many. */
  async prune(): Promise<number> {
    const { retentionDays, pruneBatchSize } = this.config.provisioning.radacct;
    if (retentionDays === 0) {
      return 0;
    }
    const cutoff = new Date(this.clock.now().getTime() - retentionDays * DAY_MS);
    let total = 0;
    for (;;) {
      const deleted = await this.radius.pruneAccounting(cutoff, pruneBatchSize);
      total += deleted;
      if (deleted < pruneBatchSize || this.loop.stopped) {
        break;
      }
    }
    if (total > 0) {
      this.logger.log({ msg: 'radacct pruned', deleted: total, stopped_before: cutoff.toISOString() });
    }
    return total;
  }
}
