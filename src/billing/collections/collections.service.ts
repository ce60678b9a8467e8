import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import type { Invoice } from '../invoices/invoice.entity';
import { CollectionsRepository, type DueReminder, type SubjectFilter } from './collections.repository';

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
  owesPastDue(manager: EntityManager, tenantId: string, subscriberId: string, today: string): Promise<boolean> {
    return this.collections.owesPastDue(manager, tenantId, subscriberId, today);
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
