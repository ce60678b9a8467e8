import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Clock } from '../common/clock';
import { PolledWorker } from '../common/polled-worker';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { TenantsService } from '../gateway';
import { NetworkSettingsRepository } from './network-settings.repository';
import { NETWORK_DRIVER, type NetworkDriver } from './network/network-driver';
import { profileOf } from './network/suspension-profile';

/** Tenants' changes claimed at once. */
const BATCH = 20;

/**
 * Carries a change of a tenant's network settings to the network (issue 33): the driver rewrites the tenant's
 * suspended group from the new profile and disconnects the suspended sessions online, so they log in again into it;
 * then the change is recorded as applied. Changes are claimed with FOR UPDATE SKIP LOCKED under a lease, so instances
 * share them; a failure is tried again after PROVISIONING_RETRY_DELAYS_S's first delay, a dead worker's claim after its
 * lease (PROVISIONING_LEASE_MS). Runs where the provisioning worker runs, at its poll, and is woken by the change's
 * commit.
 */
@Injectable()
export class NetworkSettingsWorker extends PolledWorker {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(NETWORK_DRIVER) private readonly driver: NetworkDriver,
    private readonly settings: NetworkSettingsRepository,
    private readonly tenants: TenantsService,
    private readonly clock: Clock,
  ) {
    super('NetworkSettingsWorker', 'network settings pass failed');
  }

  protected pollMs(): number | null {
    return this.config.provisioning.workerEnabled ? this.config.provisioning.pollMs : null;
  }

  protected async pass(): Promise<void> {
    const { manager } = this.dataSource;
    for (;;) {
      if (this.loop.stopped) {
        return;
      }
      const claimed = await this.settings.claimPending(manager, this.config.provisioning.leaseMs, BATCH);
      for (const settings of claimed) {
        try {
          const tenant = await this.tenants.findByIdOrSlug(settings.tenantId);
          const realm = `${tenant?.slug ?? settings.tenantId}/`;
          const outcome = await this.driver.suspensionChanged?.(
            settings.tenantId,
            realm,
            profileOf(settings),
          );
          await this.settings.markApplied(manager, settings.tenantId, settings.version, this.clock.now());
          this.logger.log({
            msg: 'network settings applied',
            tenant_id: settings.tenantId,
            suspension_mode: settings.suspensionMode,
            sessions: outcome?.sessions ?? 0,
            disconnect: outcome?.disconnect ?? null,
          });
        } catch (error) {
          const delayMs = (this.config.provisioning.retryDelaysS[0] ?? 5) * 1000;
          this.logger.warn({
            msg: 'network settings not applied; tried again later',
            tenant_id: settings.tenantId,
            err: (error as Error).message,
          });
          await this.settings.retryLater(manager, settings.tenantId, delayMs);
        }
      }
      if (claimed.length < BATCH) {
        return;
      }
    }
  }
}
