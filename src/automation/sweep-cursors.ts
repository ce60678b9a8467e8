import type { SubjectFilter, SweepKey, SweepRequest } from '../billing';
import { liveTenant } from '../gateway';

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

/**
 * Whose invoices a sweep reads: every live tenant's, resuming where the last pass stopped (the worker's periodic
 * pass), or one test tenant's from the start (its test clock's advance, which sweeps until nothing is left: a test
 * tenant's time moves only by its advances, docs/test-clocks.md).
 */
export class SweepTarget<Sweep extends string> {
  private constructor(
    private readonly cursors: SweepCursors<Sweep>,
    private readonly tenantId: string | null,
  ) {}

  static live<Sweep extends string>(pageSize: number): SweepTarget<Sweep> {
    return new SweepTarget(new SweepCursors<Sweep>(pageSize), null);
  }

  static tenant<Sweep extends string>(pageSize: number, tenantId: string): SweepTarget<Sweep> {
    // Written into the statement's text: only an id this API makes may be.
    if (!/^ten_[0-9A-Z]+$/.test(tenantId)) {
      throw new Error(`not a tenant id: ${tenantId}`);
    }
    return new SweepTarget(new SweepCursors<Sweep>(pageSize), tenantId);
  }

  request(sweep: Sweep, today: string, filter: SubjectFilter): SweepRequest {
    const { tenantId } = this;
    const scoped: SubjectFilter = (tenant, subject) =>
      `${filter(tenant, subject)} AND ${tenantId === null ? liveTenant(tenant) : `${tenant} = '${tenantId}'`}`;
    return this.cursors.request(sweep, today, scoped);
  }

  /** Records where the sweep resumes; true when it has more to read (a tenant's sweep goes on until false). */
  moved(sweep: Sweep, next: SweepKey | null): boolean {
    this.cursors.moved(sweep, next);
    return next !== null;
  }
}
