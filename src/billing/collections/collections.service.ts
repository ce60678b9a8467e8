import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import type { Invoice } from '../invoices/invoice.entity';
import {
  CollectionsRepository,
  type DueReminder,
  type LateFeeDue,
  type SubjectFilter,
  type SweepKey,
  type SweepPage,
  type SweepResult,
} from './collections.repository';
import { AmountsOwedRepository } from './amounts-owed.repository';

/**
 * What a sweep asks for: the answers by `today` that pass `filter`, at most `limit`, reading the payable invoices in
 * (due_date, id) order from after `from` (null: the oldest due), `pageSize` at a time, at most `pages` pages.
 */
export interface SweepRequest {
  today: string;
  from: SweepKey | null;
  limit: number;
  pageSize: number;
  pages: number;
  filter: SubjectFilter;
}

/** A sweep's answers, oldest due first, and where the next sweep resumes (null: from the oldest due). */
export interface Swept<T> {
  items: T[];
  next: SweepKey | null;
}

/**
 * Billing's answers for dunning (overdue invoices, suspension and restoration, reminders), judged on what is really
 * owed: past-due amounts less the money received and not yet applied in their currency, applied oldest due first. A
 * payment recorded without an allocation therefore counts at once. Written-off, void, paid and draft invoices are not
 * payable and never owed. Automation reads billing only through this service.
 *
 * The sweeps' questions (overdueInvoices, subscribersToSuspend, dueReminders, lateFeesDue) read a bounded part of the
 * invoices past due per call (SweepRequest: `pages` × `pageSize` invoices), and answer where the next call resumes: a
 * pass costs what its pages read, however many invoices are past due, and invoices that the money received covers at
 * the head of the order delay those after them by a call at most, never for good.
 */
@Injectable()
export class CollectionsService {
  constructor(
    private readonly collections: CollectionsRepository,
    private readonly owed: AmountsOwedRepository,
  ) {}

  /**
   * Invoices really owed past their due date (before `today`), passing `filter`, oldest due first from `from`; locked,
   * skipping held ones.
   */
  async overdueInvoices(manager: EntityManager, request: SweepRequest): Promise<Swept<Invoice>> {
    const swept = await this.sweep(
      request,
      (page) => this.collections.overdueInvoices(manager, request.today, page, request.filter),
      (id) => id,
    );
    return { items: await this.collections.lockPayable(manager, swept.items), next: swept.next };
  }

  /** Active subscribers that really owe invoices past their profile's auto_suspend_after_days, passing `filter`. */
  subscribersToSuspend(
    manager: EntityManager,
    request: SweepRequest,
  ): Promise<Swept<{ tenantId: string; id: string }>> {
    return this.sweep(
      request,
      (page) => this.collections.toSuspend(manager, request.today, page, request.filter),
      (subscriber) => `${subscriber.tenantId}/${subscriber.id}`,
    );
  }

  /** Whether the subscriber really owes an invoice past its due date (before `today`), in any currency. */
  owesPastDue(
    manager: EntityManager,
    tenantId: string,
    subscriberId: string,
    today: string,
  ): Promise<boolean> {
    return this.owed.owesPastDue(manager, tenantId, subscriberId, today);
  }

  /**
   * Invoices that earn a late fee by `today` (past due_date + after_days, really owed less their own late fee lines, no
   * late fee yet), passing `filter`, oldest due first from `from`.
   */
  lateFeesDue(manager: EntityManager, request: SweepRequest): Promise<Swept<LateFeeDue>> {
    return this.sweep(
      request,
      (page) => this.collections.lateFeesDue(manager, request.today, page, request.filter),
      (due) => due.invoiceId,
    );
  }

  /** Whether this invoice earns a late fee by `today`, and on what base; null when it does not. */
  lateFeeDueOn(
    manager: EntityManager,
    today: string,
    tenantId: string,
    invoiceId: string,
  ): Promise<LateFeeDue | null> {
    return this.collections.lateFeeDueOn(manager, today, tenantId, invoiceId);
  }

  /** Whether the subscriber really owes fees: fee lines of open invoices, or pending fee charges not yet covered. */
  owesFees(manager: EntityManager, tenantId: string, subscriberId: string): Promise<boolean> {
    return this.owed.owesFees(manager, tenantId, subscriberId);
  }

  /** The reminders due by `today` (the latest offset per invoice) of invoices really owed, passing `filter`. */
  async dueReminders(manager: EntityManager, request: SweepRequest): Promise<Swept<DueReminder>> {
    const swept = await this.sweep(
      request,
      (page) => this.collections.dueReminders(manager, request.today, page, request.filter),
      (due) => due.invoiceId,
    );
    const invoices = await this.collections.invoicesByIds(
      manager,
      swept.items.map((due) => due.invoiceId),
    );
    const byId = new Map(invoices.map((invoice) => [invoice.id, invoice]));
    return {
      items: swept.items.map(({ invoiceId, offsetDays, amountDue }) => ({
        invoice: byId.get(invoiceId)!,
        offsetDays,
        amountDue,
      })),
      next: swept.next,
    };
  }

  /**
   * Reads pages from `request.from` until `limit` answers (each once, by `identity`), `pages` pages, or the end of the
   * order after a start from the oldest due. A sweep that began further on reads on from the oldest due once it
   * reaches the end, so every invoice past due is read within a bounded number of calls, whatever comes before it.
   */
  private async sweep<T>(
    request: SweepRequest,
    read: (page: SweepPage) => Promise<SweepResult<T>>,
    identity: (item: T) => string,
  ): Promise<Swept<T>> {
    const items = new Map<string, T>();
    let after = request.from;
    let fromStart = after === null;
    for (let page = 0; page < request.pages && items.size < request.limit; page += 1) {
      const result = await read({ after, scan: request.pageSize, limit: request.limit - items.size });
      for (const item of result.items) {
        if (!items.has(identity(item))) {
          items.set(identity(item), item);
        }
      }
      after = result.next;
      if (after === null) {
        if (fromStart) {
          break;
        }
        fromStart = true;
      }
    }
    return { items: [...items.values()], next: after };
  }
}
