/**
 * Gathers the calls made in one turn of the event loop and hands them to `run` together: callers that each want one
 * row written (the provisioning worker's orders, carried out side by side) share one transaction and a few statements
 * instead of each paying its own round trips. `run` answers one result per item, in order; when it throws, every
 * caller of that batch gets the error.
 */
export class Batcher<I, O> {
  private pending: { item: I; resolve: (value: O) => void; reject: (error: unknown) => void }[] = [];

  constructor(private readonly run: (items: I[]) => Promise<O[]>) {}

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      if (this.pending.length === 0) {
        // After the microtasks of this turn: every caller woken by the same event has submitted by then.
        setImmediate(() => void this.flush());
      }
      this.pending.push({ item, resolve, reject });
    });
  }

  private async flush(): Promise<void> {
    const batch = this.pending;
    this.pending = [];
    try {
      const results = await this.run(batch.map((entry) => entry.item));
      batch.forEach((entry, index) => entry.resolve(results[index]));
    } catch (error) {
      for (const entry of batch) {
        entry.reject(error);
      }
    }
  }
}
