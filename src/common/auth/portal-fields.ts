import { NOTIFICATION_KINDS } from '../notification-kinds';

/**
 * What a portal session sees of each answer (docs/portal.md, "What a portal sees"; docs/decisions.md): per record
 * type, the fields it is shown. Deny by default: a field not listed here (or listed `false`) is taken out of the
 * answer, so a field added to a DTO later is operator-only until it is listed here. `true` shows the value as it is (a
 * scalar, or a list of scalars); a nested view shows an object, or each object of a list, through that view. `false`
 * records a field decided hidden, so that portal-fields.spec.ts can tell an undecided field (one of the document's
 * schema that is neither) from a hidden one.
 */
export interface PortalView {
  readonly [field: string]: PortalView | boolean;
}

const LINE_TAX: PortalView = {
  name: true,
  percentage: true,
  inclusive: true,
  compound: true,
  taxable_amount: true,
  amount: true,
  tax_rate_id: false, // the tenant's tax configuration, which a portal cannot read; name and percentage say it
};

const TAX_SUMMARY_ROW: PortalView = LINE_TAX;

const INVOICE_LINE: PortalView = {
  description: true,
  quantity: true,
  unit_amount: true,
  net_amount: true,
  tax_amount: true,
  amount: true,
  taxes: LINE_TAX,
  period_start: true,
  period_end: true,
  service_id: true,
  plan_id: true,
  charge_id: true,
  tax_rate_ids: false,
};

const ALLOCATION: PortalView = {
  id: true,
  transaction_id: true,
  invoice_id: true,
  target: true,
  amount: true,
  currency: true,
  created_at: true,
};

/** The subscriber's notification switches: one per kind, the same list its PATCH takes. */
const NOTIFICATION_SWITCHES: PortalView = Object.fromEntries(NOTIFICATION_KINDS.map((kind) => [kind, true]));

const PORTAL_SESSION: PortalView = {
  id: true,
  subscriber_id: true,
  method: true,
  expires_at: true,
  created_at: true,
};

const TICKET: PortalView = {
  id: true,
  number: true,
  subject: true,
  description: true,
  type: true,
  priority: true,
  status: true,
  subscriber_id: true,
  resolved_at: true,
  closed_at: true,
  created_at: true,
  updated_at: true,
  // The operator's desk: who works it, its labels and ids, its SLA clock.
  assignee: false,
  tags: false,
  external_id: false,
  metadata: false,
  due_at: false,
  overdue: false,
  first_response_at: false,
};

/** Each record type a portal operation answers, by the name of its schema in openapi.json. */
export const PORTAL_VIEWS = {
  Subscriber: {
    id: true,
    full_name: true,
    email: true,
    phone: true,
    address: { line1: true, city: true, state: true, postal_code: true },
    status: true,
    tax_exempt: true,
    tax_exempt_reason: true, // printed on its invoices
    tax_id: true,
    created_at: true,
    updated_at: true,
    external_id: false, // the operator's own id (CRM, import)
    billing_profile_id: false, // the tenant's billing configuration
    metadata: false, // the operator's notes
    suspension_reason: false, // the operator's judgement (fraud, manual); status says suspended
  },
  NotificationPreferences: {
    subscriber_id: true,
    preferences: NOTIFICATION_SWITCHES,
    legal_notices: true,
    updated_at: true,
  },
  Service: {
    id: true,
    subscriber_id: true,
    plan_id: true,
    status: true,
    pppoe_username: true,
    radius_username: true, // the login its router sends
    static_ipv4: true,
    delegated_ipv6_prefix: true,
    installation_address: true,
    cap_state: true,
    activated_at: true,
    terminated_at: true,
    created_at: true,
    updated_at: true,
    external_id: false,
    ip_pool_id: false, // the tenant's network inventory
    ipv6_pool_id: false,
    cpe_mac: false,
  },
  Usage: {
    service_id: true,
    from: true,
    to: true,
    days: { date: true, bytes_in: true, bytes_out: true },
    total: { bytes_in: true, bytes_out: true },
  },
  Invoice: {
    id: true,
    number: true,
    subscriber_id: true,
    currency: true,
    status: true,
    lines: INVOICE_LINE,
    subtotal: true,
    taxes: TAX_SUMMARY_ROW,
    tax_amount: true,
    total: true,
    amount_paid: true,
    amount_due: true,
    due_date: true,
    overdue: true,
    finalized_at: true,
    paid_at: true,
    voided_at: true,
    void_reason: true, // printed on its PDF
    written_off_at: true,
    amount_written_off: true,
    created_at: true,
    updated_at: true,
    allocations: ALLOCATION,
    sequence: false, // the series' counter; number is the document's
    write_off_reason: false, // the operator's reasoning about a debt
  },
  CreditNote: {
    id: true,
    number: true,
    invoice_id: true,
    subscriber_id: true,
    currency: true,
    reason: true, // printed on its PDF
    lines: { ...INVOICE_LINE, invoice_line: true },
    subtotal: true,
    taxes: TAX_SUMMARY_ROW,
    tax_amount: true,
    total: true,
    credit_transaction_id: true,
    applied_to_invoice: true,
    refund_transaction_id: true,
    refund_of: true,
    created_at: true,
    sequence: false,
  },
  SubscriberBalance: {
    subscriber_id: true,
    balances: { currency: true, balance: true, open_invoices_due: true, unallocated_credit: true },
  },
  Statement: {
    subscriber_id: true,
    currency: true,
    from: true,
    to: true,
    opening_balance: true,
    closing_balance: true,
    total_debits: true,
    total_credits: true,
    entries: {
      date: true,
      kind: true,
      reference: true,
      description: true,
      source_id: true,
      debit: true,
      credit: true,
      balance: true,
    },
  },
  Ticket: TICKET,
  TicketDetail: {
    ...TICKET,
    // When it moved and where; not who moved it (an operator's token) nor the operator's note.
    status_history: { from: true, to: true, at: true, actor: false, reason: false },
  },
  Comment: {
    id: true,
    ticket_id: true,
    body: true,
    public: true,
    author_type: true,
    created_at: true,
    author: false, // the operator's handle (noc.jane)
  },
  PortalSession: PORTAL_SESSION,
  PortalSessionInfo: {
    ...PORTAL_SESSION,
    tenant: { id: true, name: true, locale: true, payment_instructions: true },
    plans: { id: true, name: true, download_kbps: true, upload_kbps: true },
  },
} as const satisfies Record<string, PortalView>;

/** What a portal operation answers: a record type of PORTAL_VIEWS, or a document (PDF bytes, sent as they are). */
export type PortalAnswer = keyof typeof PORTAL_VIEWS | 'document';

/** The value as a portal sees it through the view: an object keeps only the fields the view shows, recursively. */
export function portalView(view: PortalView, value: unknown): unknown {
  if (Array.isArray(value)) {
    return value.map((item) => portalView(view, item));
  }
  if (value === null || typeof value !== 'object') {
    return value;
  }
  const shown: Record<string, unknown> = {};
  for (const [field, item] of Object.entries(value)) {
    // Own properties only: a field named like one of Object's (constructor, toString) is no view's.
    const rule = Object.hasOwn(view, field) ? view[field] : false;
    if (rule === true) {
      if (isPlain(item)) {
        shown[field] = item;
      }
    } else if (rule !== false) {
      shown[field] = portalView(rule, item);
    }
  }
  return shown;
}

/** A scalar or a list of scalars: what a field shown as it is may hold (an object there would be shown unviewed). */
function isPlain(value: unknown): boolean {
  const plain = (item: unknown) => item === null || typeof item !== 'object';
  return Array.isArray(value) ? value.every(plain) : plain(value);
}
