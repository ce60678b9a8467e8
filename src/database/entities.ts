import { Invoice, InvoiceCounter } from '../billing/invoices/invoice.entity';
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
import { AutomationEffect, AutomationRuleSetting, EventConsumer } from '../automation/automation.entity';
import { EventRecord } from '../events/event.entity';
import { IdempotencyKey } from '../gateway/idempotency/idempotency-key.entity';
import { ApiToken } from '../gateway/tokens/api-token.entity';
import { Tenant } from '../gateway/tenants/tenant.entity';
import { Webhook, WebhookAttempt, WebhookDelivery } from '../webhooks/webhook.entity';
import { Subscriber } from '../subscribers/subscriber.entity';
import { NasDevice, ProvisioningOrder, Service, ServicePlan } from '../provisioning/provisioning.entity';
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
  ApiToken,
  EventRecord,
  IdempotencyKey,
  BillingProfile,
  Subscriber,
  Invoice,
  InvoiceCounter,
  Transaction,
  Allocation,
  LedgerEntry,
  SubscriberBalance,
  Webhook,
  WebhookDelivery,
  WebhookAttempt,
  BillingRun,
  BillingPeriod,
  ServiceBilling,
  BillingRunItem,
  Charge,
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
];
