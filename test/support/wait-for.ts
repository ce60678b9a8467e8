/**
 * Waiting in tests: on a condition, never a fixed time. A fixed sleep long enough for a loaded machine (parallel jest
 * workers on two cores) makes every run slow, and one short enough for a quiet machine fails under load and passes
 * alone. `waitFor` and `waitUntil` poll until the condition holds, so they cost what the work takes, and their
 * timeout is only the bound past which the work is taken to have failed: roomy, since nothing waits for it on success.
 * The suites' own pollers (webhook-receiver.ts, automation-factory.ts, billing-run-factory.ts, provisioning-factory.ts)
 * are these with their domain's probe.
 *
 * A suite that proves something does NOT happen has no condition to wait on: it lets time pass with
 * `letTimePass(ms)`, after a witness has shown that the work it watches runs, and says so where it calls it.
 */

export interface WaitOptions {
  /** How long until the wait fails, in ms (default 30 s). */
  timeout?: number;
  /** Pause between two probes, in ms (default 25). */
  interval?: number;
  /** What is waited for, for the failure message. */
  what?: string;
}

/**
 * Calls `probe` until `done` holds for its answer, and answers it (a list until it has the rows looked for, a record
 * until it leaves a state). A probe that throws is retried (a server not listening yet); the last error or answer is
 * in the message of the timeout.
 */
export async function waitUntil<T>(
  probe: () => T | Promise<T>,
  done: (value: T) => boolean,
  { timeout = 30_000, interval = 25, what = 'the condition' }: WaitOptions = {},
): Promise<T> {
  const deadline = Date.now() + timeout;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (done(value)) {
        return value;
      }
      last = value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) {
      const seen = last instanceof Error ? last.message : JSON.stringify(last);
      throw new Error(`${what}: not reached within ${timeout} ms; last seen: ${String(seen).slice(0, 2000)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, interval));
  }
}

/** Calls `probe` until it answers something other than undefined, null or false, and answers that. */
export function waitFor<T>(
  probe: () => T | undefined | null | false | Promise<T | undefined | null | false>,
  options: WaitOptions = {},
): Promise<T> {
  return waitUntil(
    probe,
    (value) => value !== undefined && value !== null && value !== false,
    options,
  ) as Promise<T>;
}

/**
 * Lets `ms` of real time pass, for a check that something does NOT happen in that time (a worker polling every
 * 50 ms goes round many times), or for two writes to get different timestamps. Never to wait for something to
 * happen: that is `waitFor`.
 */
export function letTimePass(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
