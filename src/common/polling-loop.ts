import type { Logger } from '@nestjs/common';

/**
 * The loop every background worker runs: a pass on each poll tick and whenever woken (a commit that made work), never
 * two passes at once (a wake during a pass runs one more right after it), and a stop that waits for the pass under
 * way. `wake` does nothing until `start` (a worker turned off in this process never runs).
 */
export class PollingLoop {
  private timer?: NodeJS.Timeout;
  private started = false;
  private running = false;
  private rerun = false;
  private halted = false;
  private current: Promise<void> = Promise.resolve();

  constructor(
    private readonly logger: Logger,
    /** What the log says when a pass throws. */
    private readonly failure: string,
    private readonly pass: () => Promise<void>,
  ) {}

  /** Whether the application is shutting down: a pass checks it between batches. */
  get stopped(): boolean {
    return this.halted;
  }

  start(pollMs: number): void {
    this.started = true;
    this.timer = setInterval(() => this.wake(), pollMs);
    this.timer.unref();
    this.wake();
  }

  async stop(): Promise<void> {
    this.halted = true;
    clearInterval(this.timer);
    await this.current;
  }

  /** Starts a pass now, or right after the one under way. */
  wake(): void {
    if (!this.started || this.halted) {
      return;
    }
    if (this.running) {
      this.rerun = true;
      return;
    }
    this.running = true;
    this.current = this.pass()
      .catch((error: Error) => this.logger.error({ msg: this.failure, err: error.message }))
      .finally(() => {
        this.running = false;
        if (this.rerun && !this.halted) {
          this.rerun = false;
          this.wake();
        }
      });
  }
}
