import { Foundation1795235342641 } from './1795235342641-Foundation';
import { SubscribersBillingProfilesIdempotency1795235750197 } from './1795235750197-SubscribersBillingProfilesIdempotency';
import { Billing1795236130814 } from './1795236130814-Billing';
import { Webhooks1795236505882 } from './1795236505882-Webhooks';
import { CheckExternalIdBeforeEmail1795237522991 } from './1795237522991-CheckExternalIdBeforeEmail';
import { NewIdFunction1795300000000 } from './1795300000000-NewIdFunction';
import { ClaimableDeliveriesAndListIndexes1795400000000 } from './1795400000000-ClaimableDeliveriesAndListIndexes';
import { MoneyConstraintsAndForeignKeys1795400000001 } from './1795400000001-MoneyConstraintsAndForeignKeys';
import { SubscriberBillingProfilePerTenant1795500000000 } from './1795500000000-SubscriberBillingProfilePerTenant';
import { Tickets1795600000000 } from './1795600000000-Tickets';
import { Provisioning1795700000000 } from './1795700000000-Provisioning';
import { RecurringBillingAutomation1795800000000 } from './1795800000000-RecurringBillingAutomation';
import { NetworkSessions1795900000000 } from './1795900000000-NetworkSessions';
import { ClaimInStatement1796000000000 } from './1796000000000-ClaimInStatement';
import { InvoiceVoidReason1796100000700 } from './1796100000700-InvoiceVoidReason';
import { BilledThroughAndCharges1796200000000 } from './1796200000000-BilledThroughAndCharges';
import { InvoiceWriteOff1796200000100 } from './1796200000100-InvoiceWriteOff';
import { AutoApplyReminders1796200000200 } from './1796200000200-AutoApplyReminders';
import { BillingProfileFees1796200000300 } from './1796200000300-BillingProfileFees';
import { SweepOrderIndex1796200000450 } from './1796200000450-SweepOrderIndex';
import { Taxes1796300000000 } from './1796300000000-Taxes';
import { TenantSettingsNumbering1796300000100 } from './1796300000100-TenantSettingsNumbering';
import { InvoiceTaxesNumbers1796300000200 } from './1796300000200-InvoiceTaxesNumbers';
import { CreditNotes1796300000300 } from './1796300000300-CreditNotes';
import { TenantMailSettings1796400000000 } from './1796400000000-TenantMailSettings';
import { Notifications1796500000000 } from './1796500000000-Notifications';
import { SubscriberSearch1796600000000 } from './1796600000000-SubscriberSearch';
import { Imports1796610000000 } from './1796610000000-Imports';
import { ReportIndexes1796630000000 } from './1796630000000-ReportIndexes';
import { TestClocks1796640000000 } from './1796640000000-TestClocks';
import { ImportKinds1796650000000 } from './1796650000000-ImportKinds';
import { MrrSeries1796680000000 } from './1796680000000-MrrSeries';
import { RevenueDays1796680000100 } from './1796680000100-RevenueDays';
import { IpPools1796700000000 } from './1796700000000-IpPools';
import { DataCapsAndBurst1796710000000 } from './1796710000000-DataCapsAndBurst';
import { WalledGardenAndAccountingRetention1796720000000 } from './1796720000000-WalledGardenAndAccountingRetention';
import { AgingKeptAsData1796730000000 } from './1796730000000-AgingKeptAsData';
import { PortalAccess1796740000000 } from './1796740000000-PortalAccess';
import { PortalEmail1796750000000 } from './1796750000000-PortalEmail';
import { AgingShards1796800000000 } from './1796800000000-AgingShards';

/** Every migration, in order. A new migration file is added here too. */
export const MIGRATIONS = [
  Foundation1795235342641,
  SubscribersBillingProfilesIdempotency1795235750197,
  Billing1795236130814,
  Webhooks1795236505882,
  CheckExternalIdBeforeEmail1795237522991,
  NewIdFunction1795300000000,
  ClaimableDeliveriesAndListIndexes1795400000000,
  MoneyConstraintsAndForeignKeys1795400000001,
  SubscriberBillingProfilePerTenant1795500000000,
  Tickets1795600000000,
  Provisioning1795700000000,
  RecurringBillingAutomation1795800000000,
  NetworkSessions1795900000000,
  ClaimInStatement1796000000000,
  InvoiceVoidReason1796100000700,
  BilledThroughAndCharges1796200000000,
  InvoiceWriteOff1796200000100,
  AutoApplyReminders1796200000200,
  BillingProfileFees1796200000300,
  SweepOrderIndex1796200000450,
  Taxes1796300000000,
  TenantSettingsNumbering1796300000100,
  InvoiceTaxesNumbers1796300000200,
  CreditNotes1796300000300,
  TenantMailSettings1796400000000,
  Notifications1796500000000,
  SubscriberSearch1796600000000,
  Imports1796610000000,
  ReportIndexes1796630000000,
  TestClocks1796640000000,
  ImportKinds1796650000000,
  MrrSeries1796680000000,
  RevenueDays1796680000100,
  IpPools1796700000000,
  DataCapsAndBurst1796710000000,
  WalledGardenAndAccountingRetention1796720000000,
  AgingKeptAsData1796730000000,
  PortalAccess1796740000000,
  PortalEmail1796750000000,
  AgingShards1796800000000,
];
