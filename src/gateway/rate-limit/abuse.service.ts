import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';
import { COUNTER_STORE, type CounterStore } from './counter-store';

/** The abuse threshold: too many failed authentications from one IP block that IP for a cool-down. */
@Injectable()
export class AbuseService {
  constructor(
    @Inject(COUNTER_STORE) private readonly counters: CounterStore,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Seconds the IP stays blocked, or 0 when it is not blocked. */
  async blockedForS(ip: string): Promise<number> {
    const block = await this.counters.get(`abuse:block:${ip}`);
    return block ? Math.max(1, Math.ceil(block.resetMs / 1000)) : 0;
  }

  async recordAuthFailure(ip: string): Promise<void> {
    const { authFailuresMax, windowS, blockS } = this.config.abuse;
    const failures = await this.counters.hit(`abuse:fail:${ip}`, windowS * 1000);
    if (failures.count >= authFailuresMax) {
      await this.counters.set(`abuse:block:${ip}`, blockS * 1000);
    }
  }
}
