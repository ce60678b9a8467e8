import { Injectable } from '@nestjs/common';
import type { Tx } from '../database/transaction-runner';
import { ChargesRepository } from './charges/charges.repository';
import { CreditNotesRepository } from './credit-notes/credit-notes.repository';
import { InvoicesRepository } from './invoices/invoices.repository';
import { LedgerRepository } from './ledger/ledger.repository';
import { NumberingRepository } from './numbering/numbering.repository';
import { BillingProfilesRepository } from './profiles/billing-profiles.repository';
import { AgingRepository } from './reports/aging.repository';
import { MrrRepository } from './reports/mrr.repository';
import { RevenueRepository } from './reports/revenue.repository';
import { BillingPeriodsRepository } from './runs/billing-periods.repository';
import { BillingRunsRepository } from './runs/billing-runs.repository';
import { ServiceBillingRepository } from './runs/service-billing.repository';
import { TaxRatesRepository } from './taxes/tax-rates.repository';
import { TransactionsRepository } from './transactions/transactions.repository';

/**
 * Deletes a test tenant's billing (its test clock is deleted, docs/test-clocks.md), each table by the repository of
 * its sub-folder. Two steps around the subscribers' deletion: billing's documents name subscribers, and subscribers
 * name their billing profile.
 */
@Injectable()
export class BillingPurge {
  constructor(
    private readonly transactions: TransactionsRepository,
    private readonly creditNotes: CreditNotesRepository,
    private readonly ledger: LedgerRepository,
    private readonly invoices: InvoicesRepository,
    private readonly charges: ChargesRepository,
    private readonly runs: BillingRunsRepository,
    private readonly periods: BillingPeriodsRepository,
    private readonly serviceBilling: ServiceBillingRepository,
    private readonly taxRates: TaxRatesRepository,
    private readonly numbering: NumberingRepository,
    private readonly profiles: BillingProfilesRepository,
    private readonly mrr: MrrRepository,
    private readonly revenue: RevenueRepository,
    private readonly aging: AgingRepository,
  ) {}

  /** Everything of the tenant's billing but its profiles: before its subscribers are deleted. */
  async purgeTenant(tx: Tx, tenantId: string): Promise<void> {
    const { manager } = tx;
    await this.mrr.purgeTenant(manager, tenantId);
    await this.revenue.purgeTenant(manager, tenantId);
    await this.transactions.purgeTenant(manager, tenantId);
    await this.creditNotes.purgeTenant(manager, tenantId);
    await this.ledger.purgeTenant(manager, tenantId);
    await this.invoices.purgeTenant(manager, tenantId);
    await this.charges.purgeTenant(manager, tenantId);
    await this.periods.purgeTenant(manager, tenantId);
    await this.runs.purgeTenant(manager, tenantId);
    await this.serviceBilling.purgeTenant(manager, tenantId);
    await this.taxRates.purgeTenant(manager, tenantId);
    await this.numbering.purgeTenant(manager, tenantId);
    // Last: deleting allocations moves the aging rows their triggers keep (docs/reports.md).
    await this.aging.purgeTenant(manager, tenantId);
  }

  /** The tenant's billing profiles: after its subscribers, which name them. */
  async purgeProfiles(tx: Tx, tenantId: string): Promise<void> {
    await this.profiles.purgeTenant(tx.manager, tenantId);
  }
}
