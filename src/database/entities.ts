import { Invoice } from '../billing/invoices/invoice.entity';
import { LedgerEntry, SubscriberBalance } from '../billing/ledger/ledger-entry.entity';
import { Allocation, Transaction } from '../billing/transactions/transaction.entity';
import { BillingProfile } from '../billing/profiles/billing-profile.entity';
import {
  BillingPeriod,
  BillingRun,
  BillingRunItem,
  ServiceBilling,
} from '../billing/runs/billing-run.entity';
import { Charge } from '../billing/charges/charge.entity';
import { CreditNote } from '../billing/credit-notes/credit-note.entity';
import { DocumentCounter } from '../billing/numbering/document-counter.entity';
import { TaxRate } from '../billing/taxes/tax-rate.entity';
import { AutomationEffect, AutomationRuleSetting, EventConsumer } from '../automation/automation.entity';
import { EventRecord } from '../events/event.entity';
import { IdempotencyKey } from '../gateway/idempotency/idempotency-key.entity';
import { ApiToken } from '../gateway/tokens/api-token.entity';
import { PortalInvite, PortalSession, PortalSignInCode } from '../portal/portal.entity';
import { TestClock } from '../gateway/clocks/test-clock.entity';
import { Tenant } from '../gateway/tenants/tenant.entity';
import { TenantSettings } from '../gateway/tenants/tenant-settings.entity';
import { Webhook, WebhookAttempt, WebhookDelivery } from '../webhooks/webhook.entity';
import {
  Notification,
  NotificationAttempt,
  NotificationPreference,
  NotificationTemplateRecord,
} from '../notifications/notification.entity';
import { ImportJob, ImportRow, ImportRowError } from '../imports/import.entity';
import { Subscriber } from '../subscribers/subscriber.entity';
import { NasDevice, ProvisioningOrder, Service, ServicePlan } from '../provisioning/provisioning.entity';
import { IpAllocation, IpPool } from '../provisioning/ipam/ip-pool.entity';
import { ServiceTopUp, ServiceUsagePeriod } from '../provisioning/data-caps/data-cap.entity';
import { NetworkSettings } from '../provisioning/network-settings.entity';
import {
  Ticket,
  TicketComment,
  TicketCounter,
  TicketSettings,
  TicketStatusChange,
} from '../tickets/ticket.entity';

/** Every entity of the service, in one list for the DataSource and the migration drift check. */
export const ENTITIES = [
  Tenant,
  TenantSettings,
  TestClock,
  ApiToken,
  EventRecord,
  IdempotencyKey,
  BillingProfile,
  Subscriber,
  Invoice,
  DocumentCounter,
  Transaction,
  Allocation,
  LedgerEntry,
  SubscriberBalance,
  Webhook,
  WebhookDelivery,
  WebhookAttempt,
  Notification,
  NotificationAttempt,
  NotificationTemplateRecord,
  NotificationPreference,
  BillingRun,
  BillingPeriod,
  ServiceBilling,
  BillingRunItem,
  Charge,
  CreditNote,
  TaxRate,
  AutomationRuleSetting,
  EventConsumer,
  AutomationEffect,
  Ticket,
  TicketStatusChange,
  TicketComment,
  TicketCounter,
  TicketSettings,
  ServicePlan,
  Service,
  ProvisioningOrder,
  NasDevice,
  IpPool,
  IpAllocation,
  ServiceUsagePeriod,
  ServiceTopUp,
  NetworkSettings,
  ImportJob,
  ImportRow,
  ImportRowError,
  PortalInvite,
  PortalSession,
  PortalSignInCode,
];
