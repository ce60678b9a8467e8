import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { atFrozenTime } from '../../common/clock';
import { groupBy } from '../../common/group-by';
import { PolledWorker } from '../../common/polled-worker';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';
import { TenantTime } from '../../gateway';
import { DataCapsRepository } from './data-caps.repository';
import { DataCapsService } from './data-caps.service';

/** Services measured per batch (one usage statement per tenant in it). */
const BATCH = 500;

/**
 * The data cap worker (docs/network.md, "Data caps"): every DATA_CAP_POLL_MS (and when a top-up wakes it) it walks the
 * services whose plan has a cap (or whose cap state is to be undone), measures each one's usage this billing period
 * from RADIUS accounting, and warns, caps or restores (DataCapsService.check). A test tenant's services are judged at
 * its clock's time, so advancing the clock across a period start restores them.
 */
@Injectable()
export class DataCapWorker extends PolledWorker {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly caps: DataCapsRepository,
    private readonly dataCaps: DataCapsService,
    private readonly tenantTime: TenantTime,
  ) {
    super('DataCapWorker', 'data cap pass failed');
  }

  protected pollMs(): number | null {
    return this.config.provisioning.workerEnabled ? this.config.provisioning.dataCapPollMs : null;
  }

  protected async pass(): Promise<void> {
    const { manager } = this.dataSource;
    let after = { tenantId: '', id: '' };
    for (;;) {
      if (this.loop.stopped) {
        return;
      }
      const batch = await this.caps.candidates(manager, after, BATCH);
      if (batch.length === 0) {
        return;
      }
      const frozen = await this.tenantTime.frozenTimes(
        manager,
        batch.map((candidate) => candidate.tenantId),
      );
      for (const [tenantId, candidates] of groupBy(batch, (candidate) => candidate.tenantId)) {
        await atFrozenTime(frozen.get(tenantId) ?? null, () => this.dataCaps.check(tenantId, candidates));
      }
      const last = batch[batch.length - 1];
      after = { tenantId: last.tenantId, id: last.id };
      if (batch.length < BATCH) {
        return;
      }
    }
  }
}
