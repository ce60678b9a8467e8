import type { PortalAnswer } from './portal-fields';

/**
 * The operations a portal session may call, by operationId (the handler's name), each with how it is held to the
 * session's subscriber. Every operation not listed here is 403 `insufficient_scope` for a portal token: deny by
 * default, so a new route is operator-only until it is added here (docs/portal.md).
 *
 * - `subscriber`: the path's `id` is a subscriber; another than the bound one is 404 `not_found`, as if it did not exist.
 * - `invoice`, `credit_note`, `service`, `ticket`: the path's `id` is such a record; one of another subscriber is 404.
 * - `list`: the query's `subscriber_id` is set to the bound subscriber; naming another is 403 (field subscriber_id).
 * - `create`: the body's `subscriber_id` is set to the bound subscriber; naming another is 403 (field subscriber_id).
 * - `session`: the portal's own routes (its session), which need no further binding.
 *
 * `answer` names what the operation answers: a record type of PORTAL_VIEWS (portal-fields.ts), whose view the
 * binding interceptor applies to the answer (a list's every item too), or `document` (PDF bytes, sent as they are).
 *
 * `body` lists the only body fields the portal may send (any other is 403 with that field); `forceBody` and
 * `forceQuery` set fields whatever was sent, except that a value sent that differs is 403 with that field.
 * `narrowQuery` keeps a comma-list filter off some values (asking for one is 403 with that field) and, when the
 * portal asks for none, sets it to every other value: a subscriber never sees a draft invoice, which is not yet issued.
 */
export type PortalSubject =
  'subscriber' | 'invoice' | 'credit_note' | 'service' | 'ticket' | 'list' | 'create' | 'session';

export interface PortalRule {
  subject: PortalSubject;
  answer: PortalAnswer;
  body?: readonly string[];
  forceBody?: Readonly<Record<string, unknown>>;
  forceQuery?: Readonly<Record<string, string>>;
  narrowQuery?: Readonly<Record<string, { deny: readonly string[]; otherwise: readonly string[] }>>;
}

/** What a subscriber's invoices may be: issued ones (InvoiceStatus but draft; portal-policy.spec.ts keeps them equal). */
export const ISSUED_INVOICE_STATUSES = ['open', 'partially_paid', 'paid', 'void', 'written_off'] as const;

export const PORTAL_OPERATIONS: Readonly<Record<string, PortalRule>> = {
  // The portal's own session.
  getPortalSession: { subject: 'session', answer: 'PortalSessionInfo' },
  deletePortalSession: { subject: 'session', answer: 'PortalSession' },
  // Its profile, and the contact fields it may change.
  getSubscriber: { subject: 'subscriber', answer: 'Subscriber' },
  updateSubscriber: { subject: 'subscriber', answer: 'Subscriber', body: ['email', 'phone'] },
  getNotificationPreferences: { subject: 'subscriber', answer: 'NotificationPreferences' },
  updateNotificationPreferences: { subject: 'subscriber', answer: 'NotificationPreferences' },
  // Services (the password is never in an answer), their usage.
  listSubscriberServices: { subject: 'subscriber', answer: 'Service' },
  listServices: { subject: 'list', answer: 'Service' },
  getService: { subject: 'service', answer: 'Service' },
  getServiceUsage: { subject: 'service', answer: 'Usage' },
  // Money: invoices, credit notes, balance, statement.
  listInvoices: {
    subject: 'list',
    answer: 'Invoice',
    narrowQuery: { status: { deny: ['draft'], otherwise: ISSUED_INVOICE_STATUSES } },
  },
  getInvoice: { subject: 'invoice', answer: 'Invoice' },
  getInvoicePdf: { subject: 'invoice', answer: 'document' },
  listCreditNotes: { subject: 'list', answer: 'CreditNote' },
  getCreditNote: { subject: 'credit_note', answer: 'CreditNote' },
  getCreditNotePdf: { subject: 'credit_note', answer: 'document' },
  getSubscriberBalance: { subject: 'subscriber', answer: 'SubscriberBalance' },
  getSubscriberStatement: { subject: 'subscriber', answer: 'Statement' },
  getSubscriberStatementPdf: { subject: 'subscriber', answer: 'document' },
  // Tickets: its own, public comments only, written as the subscriber.
  listTickets: { subject: 'list', answer: 'Ticket' },
  listSubscriberTickets: { subject: 'subscriber', answer: 'Ticket' },
  createTicket: {
    subject: 'create',
    answer: 'TicketDetail',
    body: ['subject', 'description', 'type', 'priority', 'subscriber_id'],
  },
  getTicket: { subject: 'ticket', answer: 'TicketDetail' },
  listTicketComments: { subject: 'ticket', answer: 'Comment', forceQuery: { public: 'true' } },
  createTicketComment: {
    subject: 'ticket',
    answer: 'Comment',
    body: ['body', 'public', 'author_type'],
    forceBody: { public: true, author_type: 'subscriber' },
  },
};

export function portalRuleOf(operationId: string): PortalRule | null {
  return Object.prototype.hasOwnProperty.call(PORTAL_OPERATIONS, operationId)
    ? PORTAL_OPERATIONS[operationId]
    : null;
}
