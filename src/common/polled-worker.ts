import { Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { PollingLoop } from './polling-loop';

/**
 * What every background worker is (webhooks, provisioning, automation, bill runs, notifications, imports, test
 * clocks): a PollingLoop started with the application when the worker runs in this process, stopped with it (waiting
 * for the pass under way), and woken by a commit that made work. A subclass says how often it polls and what a pass
 * does.
 */
export abstract class PolledWorker implements OnApplicationBootstrap, OnApplicationShutdown {
  protected readonly logger: Logger;
  protected readonly loop: PollingLoop;

  /** `name` is the log's context; `failure` what the log says when a pass throws. */
  protected constructor(name: string, failure: string) {
    this.logger = new Logger(name);
    this.loop = new PollingLoop(this.logger, failure, () => this.pass());
  }

  /** How often a pass runs; null when this process does not run the worker (its *_WORKER_ENABLED is false). */
  protected abstract pollMs(): number | null;

  /** One pass over the work there is now; it checks `loop.stopped` between batches. */
  protected abstract pass(): Promise<void>;

  onApplicationBootstrap(): void {
    const pollMs = this.pollMs();
    if (pollMs !== null) {
      this.loop.start(pollMs);
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await this.loop.stop();
  }

  /** Starts a pass now, or right after the one under way. */
  wake(): void {
    this.loop.wake();
  }
}
