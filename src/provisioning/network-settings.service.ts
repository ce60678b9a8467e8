import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { Clock } from '../common/clock';
import { ApiError } from '../common/errors/api-error';
import type { AuthContext } from '../common/request-context';
import { TransactionRunner } from '../database/transaction-runner';
import { EventsService } from '../events';
import { NetworkSettingsDto, UpdateNetworkSettingsDto } from './dto/network-settings.dto';
import { NetworkSettings } from './network-settings.entity';
import { NetworkSettingsRepository } from './network-settings.repository';
import { NetworkSettingsWorker } from './network-settings-worker';
import { DEFAULT_SUSPENSION_PROFILE, profileOf, type SuspensionProfile } from './network/suspension-profile';

/** Each API field and its column: the one map PATCH, the answer and the event's names go by. */
const FIELDS = [
  ['suspension_mode', 'suspensionMode'],
  ['payment_page_url', 'paymentPageUrl'],
  ['walled_garden_address_list', 'walledGardenAddressList'],
  ['walled_garden_filter_id', 'walledGardenFilterId'],
] as const;

/** The settings a tenant has before its first PATCH. */
function defaults(tenantId: string, now: Date): NetworkSettings {
  return Object.assign(new NetworkSettings(), {
    tenantId,
    suspensionMode: DEFAULT_SUSPENSION_PROFILE.mode,
    paymentPageUrl: DEFAULT_SUSPENSION_PROFILE.paymentPageUrl,
    walledGardenAddressList: DEFAULT_SUSPENSION_PROFILE.addressList,
    walledGardenFilterId: DEFAULT_SUSPENSION_PROFILE.filterId,
    version: 0,
    appliedVersion: 0,
    leaseUntil: null,
    appliedAt: null,
    updatedAt: now,
  } satisfies NetworkSettings);
}

function answer(settings: NetworkSettings | null): NetworkSettingsDto {
  const profile = profileOf(settings);
  return {
    suspension_mode: profile.mode,
    payment_page_url: profile.paymentPageUrl,
    walled_garden_address_list: profile.addressList,
    walled_garden_filter_id: profile.filterId,
    applied: settings ? settings.appliedVersion >= settings.version : true,
    applied_at: settings?.appliedAt ? settings.appliedAt.toISOString() : null,
    updated_at: settings && settings.version > 0 ? settings.updatedAt.toISOString() : null,
  };
}

/**
 * A tenant's network settings (GET/PATCH /network-settings): what a suspended service's login gets. A change is
 * recorded with a new version in the request's transaction; the NetworkSettingsWorker carries it to the network.
 */
@Injectable()
export class NetworkSettingsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly transactionRunner: TransactionRunner,
    private readonly events: EventsService,
    private readonly settings: NetworkSettingsRepository,
    private readonly clock: Clock,
    private readonly worker: NetworkSettingsWorker,
  ) {}

  async get(tenantId: string): Promise<NetworkSettingsDto> {
    return answer(await this.settings.find(this.dataSource.manager, tenantId));
  }

  /** The tenant's suspension profile, as the driver writes it into the tenant's suspended group. */
  async profile(
    tenantId: string,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<SuspensionProfile> {
    return profileOf(await this.settings.find(manager, tenantId));
  }

  /**
   * Merges the fields sent into the stored settings (the defaults, on the first PATCH) under the row's lock; a change
   * takes a new version, which the worker carries to the network once the transaction commits.
   */
  update(auth: AuthContext, dto: UpdateNetworkSettingsDto): Promise<NetworkSettingsDto> {
    const { tenantId } = auth;
    return this.transactionRunner.run(auth, async (tx) => {
      const settings = await this.settings.lock(tx.manager, defaults(tenantId, this.clock.now()));
      const changed = FIELDS.filter(
        ([field, column]) => dto[field] !== undefined && dto[field] !== settings[column],
      );
      if (changed.length === 0) {
        return answer(settings);
      }
      for (const [field, column] of changed) {
        (settings as unknown as Record<string, unknown>)[column] = dto[field];
      }
      if (settings.suspensionMode === 'walled_garden' && settings.paymentPageUrl === null) {
        throw new ApiError(
          'validation_failed',
          'payment_page_url is required in walled_garden mode: the walled garden redirects to it.',
          'payment_page_url',
        );
      }
      settings.version += 1;
      settings.leaseUntil = null;
      settings.updatedAt = this.clock.now();
      await this.settings.update(tx.manager, settings);
      const result = answer(settings);
      await this.events.append(tx, {
        tenantId,
        type: 'network_settings.updated',
        subjectId: null,
        object: result,
        details: { changed_fields: changed.map(([field]) => field) },
      });
      tx.afterCommit(() => this.worker.wake());
      return result;
    });
  }
}
