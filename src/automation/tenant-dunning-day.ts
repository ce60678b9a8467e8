import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { AutomationWorker } from './automation-worker';
import { type DunningSweep, DunningSweeps } from './dunning-sweeps';
import { FeeRules } from './fee-rules';
import { SweepTarget } from './sweep-cursors';

/**
 * One day of a test tenant's dunning, as its test clock's advance reaches it (docs/test-clocks.md): the overdue sweep
 * (announcements and suspensions), the reminders and the late fees, each read to its end for this tenant alone, then
 * the rules' reactions to what they did (restorations, reconnection fees, service orders). The caller runs it at the
 * day's time (atFrozenTime): the sweeps reason with Clock.today().
 */
@Injectable()
export class TenantDunningDay {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly dunning: DunningSweeps,
    private readonly fees: FeeRules,
    private readonly worker: AutomationWorker,
  ) {}

  async run(tenantId: string): Promise<void> {
    const pageSize = this.config.automation.sweepPageSize;
    // The reactions to the day's bill run first: a payment made meanwhile counts before the sweeps judge who owes.
    await this.worker.catchUp();
    const dunning = SweepTarget.tenant<DunningSweep>(pageSize, tenantId);
    while (await this.dunning.sweepOverdue(dunning)) {
      // more past-due invoices of the tenant to read
    }
    while (await this.dunning.sweepReminders(dunning)) {
      // more reminders due
    }
    const fees = SweepTarget.tenant<'late_fees'>(pageSize, tenantId);
    while (await this.fees.sweepLateFees(fees)) {
      // more late fees due
    }
    await this.worker.catchUp();
  }
}
