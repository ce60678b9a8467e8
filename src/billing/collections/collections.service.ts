import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import type { Invoice } from '../invoices/invoice.entity';
import {
  CollectionsRepository,
  type DueReminder,
  type LateFeeDue,
  type SubjectFilter,
} from './collections.repository';

/**
 * Billing's answers for dunning (overdue invoices, suspension and restoration, reminders), judged on what is really
 * owed: past-due amounts less the money received and not yet applied in their currency, applied oldest due first. A
 * payment recorded without an allocation therefore counts at once. Written-off, void, paid and draft invoices are not
 * payable and never owed. Automation reads billing only through this service.
 */
@Injectable()
export class CollectionsService {
  constructor(private readonly collections: CollectionsRepository) {}

  /** Invoices really owed past their due date (before `today`), passing `filter`; locked, skipping held ones. */
  overdueInvoices(
    manager: EntityManager,
    today: string,
    limit: number,
    filter: SubjectFilter,
  ): Promise<Invoice[]> {
    return this.collections.overdueInvoices(manager, today, limit, filter);
  }

  /** Active subscribers that really owe invoices past their profile's auto_suspend_after_days, passing `filter`. */
  subscribersToSuspend(
    manager: EntityManager,
    today: string,
    limit: number,
    filter: SubjectFilter,
  ): Promise<{ tenantId: string; id: string }[]> {
    return this.collections.toSuspend(manager, today, limit, filter);
  }

  /** Whether the subscriber really owes an invoice past its due date (before `today`), in any currency. */
  owesPastDue(
    manager: EntityManager,
    tenantId: string,
    subscriberId: string,
    today: string,
  ): Promise<boolean> {
    return this.collections.owesPastDue(manager, tenantId, subscriberId, today);
  }

  /**
   * Invoices that earn a late fee by `today` (past due_date + after_days, really owed less their own late fee lines, no
   * late fee yet), passing `filter`, oldest due first; with `only`, that one invoice if it does.
   */
  lateFeesDue(
    manager: EntityManager,
    today: string,
    limit: number,
    filter: SubjectFilter,
    only?: { tenantId: string; invoiceId: string },
  ): Promise<LateFeeDue[]> {
    return this.collections.lateFeesDue(manager, today, limit, filter, only);
  }

  /** Whether the subscriber really owes fees: fee lines of open invoices, or pending fee charges not yet covered. */
  owesFees(manager: EntityManager, tenantId: string, subscriberId: string): Promise<boolean> {
    return this.collections.owesFees(manager, tenantId, subscriberId);
  }

  /** The reminders due by `today` (the latest offset per invoice) of invoices really owed, passing `filter`. */
  dueReminders(
    manager: EntityManager,
    today: string,
    limit: number,
    filter: SubjectFilter,
  ): Promise<DueReminder[]> {
    return this.collections.dueReminders(manager, today, limit, filter);
  }
}
