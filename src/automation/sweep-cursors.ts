import type { SubjectFilter, SweepKey, SweepRequest } from '../billing';

/** The answers a sweep acts on per pass at most. */
export const SWEEP_BATCH = 200;

/** The pages of payable invoices (AUTOMATION_SWEEP_PAGE_SIZE each) a sweep reads per pass at most. */
export const SWEEP_PAGES = 5;

/**
 * Where each sweep of a worker resumes on its next pass (issue 28): a pass reads at most SWEEP_PAGES pages of the
 * payable invoices past due, oldest due first, so that what it costs does not grow with their number, and the next
 * pass reads on from where it stopped, back from the oldest due once it reaches the end. Invoices the money received
 * covers, or already announced, at the head of the order thus never keep a sweep from those after them. Kept in
 * memory: an instance started anew begins from the oldest due, as every instance may (each effect is once-only).
 */
export class SweepCursors<Sweep extends string> {
  private readonly next = new Map<Sweep, SweepKey | null>();

  constructor(private readonly pageSize: number) {}

  /** The sweep's request for this pass. */
  request(sweep: Sweep, today: string, filter: SubjectFilter): SweepRequest {
    return {
      today,
      from: this.next.get(sweep) ?? null,
      limit: SWEEP_BATCH,
      pageSize: this.pageSize,
      pages: SWEEP_PAGES,
      filter,
    };
  }

  /** Where the sweep resumes next, once what it read has been acted on (its transaction committed). */
  moved(sweep: Sweep, next: SweepKey | null): void {
    this.next.set(sweep, next);
  }
}
