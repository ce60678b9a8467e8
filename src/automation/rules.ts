/** The automation rules, as data: what each reacts to, what it does and what it emits (docs/automation.md). */
export const RULES = [
  {
    id: 'service_follows_subscriber',
    name: 'Services follow their subscriber',
    description:
      'A subscriber suspended gets a suspend order for each active service; suspended → active, a resume order for each suspended one; cancelled, a terminate order for each service not terminated. A service with an open order is brought in line when that order ends.',
    triggers: [
      'subscriber.status_changed',
      'provisioning_order.completed',
      'provisioning_order.failed',
      'provisioning_order.cancelled',
    ],
    emits: ['provisioning_order.created'],
  },
  {
    id: 'overdue_invoices',
    name: 'Overdue invoices and suspension for non-payment',
    description:
      "A sweep: an open invoice past its due date and really owed (the subscriber's payments and credits not yet applied, in its currency, do not cover it, oldest due first) gets invoice.overdue, once; when such an invoice is past due_date + auto_suspend_after_days of the subscriber's billing profile (or the tenant default), an active subscriber is suspended with reason non_payment.",
    triggers: ['schedule'],
    emits: ['invoice.overdue', 'subscriber.status_changed'],
  },
  {
    id: 'paid_up',
    name: 'Reactivation when paid up',
    description:
      'After a payment or credit (allocated or not), an allocation, a payment in full, a void or a write-off, a subscriber suspended for non_payment that no longer really owes anything past its due date (past-due amounts less the money received and not yet applied) goes back to active; when its billing profile has fees_before_restoration, only once no late fee invoice, fee line or pending fee charge is unpaid either. A manual or fraud suspension is never lifted.',
    triggers: [
      'transaction.allocated',
      'transaction.created',
      'invoice.paid',
      'invoice.voided',
      'invoice.written_off',
    ],
    emits: ['subscriber.status_changed'],
  },
  {
    id: 'invoice_reminders',
    name: 'Payment reminders',
    description:
      "A sweep: an open invoice still really owed gets invoice.reminder on each day due_date + offset of the subscriber's billing profile's reminder_offsets (or the tenant default's), once per invoice and offset, with the offset and the amount owed. When several offsets are due at once (an invoice first seen late), only the latest is sent.",
    triggers: ['schedule'],
    emits: ['invoice.reminder'],
  },
  {
    id: 'late_fee',
    name: 'Late fees',
    description:
      "A sweep: an open invoice still really owed once today is past due_date + after_days of the late_fee of the subscriber's billing profile (or the tenant default's) is charged that late fee, once per invoice: a fixed amount, or a percentage of the overdue amount rounded half up and held within its min_amount and max_amount. The fee is issued at once on an invoice of its own, due after the profile's payment_terms_days, so it can become overdue too; a late fee invoice earns no late fee.",
    triggers: ['schedule'],
    emits: ['charge.created', 'invoice.created', 'invoice.finalized'],
  },
  {
    id: 'reconnection_fee',
    name: 'Reconnection fees',
    description:
      "A subscriber suspended for non_payment that is made active again (by paid_up or by hand) is charged the reconnection_fee of its billing profile (or the tenant default's), once per suspension, as a pending charge its next invoice carries.",
    triggers: ['subscriber.status_changed'],
    emits: ['charge.created'],
  },
  {
    id: 'termination_billing',
    name: 'Credit for terminated services',
    description:
      "On the subscriber's next bill run, a terminated service's unused days already billed are credited (proration). Disabled: no such credit.",
    triggers: ['billing_run'],
    emits: ['invoice.created'],
  },
  {
    id: 'failed_provisioning',
    name: 'A ticket for failed provisioning',
    description:
      'A provisioning order that ends failed opens one high-priority ticket (installation for activate, incident otherwise) on the subscriber, naming the action and the error.',
    triggers: ['provisioning_order.failed'],
    emits: ['ticket.created'],
  },
] as const;

export type RuleId = (typeof RULES)[number]['id'];

export const RULE_IDS: readonly RuleId[] = RULES.map((rule) => rule.id);

export function isRuleId(value: string): value is RuleId {
  return (RULE_IDS as readonly string[]).includes(value);
}
