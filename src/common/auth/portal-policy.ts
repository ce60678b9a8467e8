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
 * `body` lists the only body fields the portal may send (any other is 403 with that field); `forceBody` and
 * `forceQuery` set fields whatever was sent, except that a value sent that differs is 403 with that field.
 */
export type PortalSubject =
  'subscriber' | 'invoice' | 'credit_note' | 'service' | 'ticket' | 'list' | 'create' | 'session';

export interface PortalRule {
  subject: PortalSubject;
  body?: readonly string[];
  forceBody?: Readonly<Record<string, unknown>>;
  forceQuery?: Readonly<Record<string, string>>;
}

export const PORTAL_OPERATIONS: Readonly<Record<string, PortalRule>> = {
  // The portal's own session.
  getPortalSession: { subject: 'session' },
  deletePortalSession: { subject: 'session' },
  // Its profile, and the contact fields it may change.
  getSubscriber: { subject: 'subscriber' },
  updateSubscriber: { subject: 'subscriber', body: ['email', 'phone'] },
  getNotificationPreferences: { subject: 'subscriber' },
  updateNotificationPreferences: { subject: 'subscriber' },
  // Services (the password is never in an answer), their usage.
  listSubscriberServices: { subject: 'subscriber' },
  listServices: { subject: 'list' },
  getService: { subject: 'service' },
  getServiceUsage: { subject: 'service' },
  // Money: invoices, credit notes, balance, statement.
  listInvoices: { subject: 'list' },
  getInvoice: { subject: 'invoice' },
  getInvoicePdf: { subject: 'invoice' },
  listCreditNotes: { subject: 'list' },
  getCreditNote: { subject: 'credit_note' },
  getCreditNotePdf: { subject: 'credit_note' },
  getSubscriberBalance: { subject: 'subscriber' },
  getSubscriberStatement: { subject: 'subscriber' },
  getSubscriberStatementPdf: { subject: 'subscriber' },
  // Tickets: its own, public comments only, written as the subscriber.
  listTickets: { subject: 'list' },
  listSubscriberTickets: { subject: 'subscriber' },
  createTicket: {
    subject: 'create',
    body: ['subject', 'description', 'type', 'priority', 'subscriber_id'],
  },
  getTicket: { subject: 'ticket' },
  listTicketComments: { subject: 'ticket', forceQuery: { public: 'true' } },
  createTicketComment: {
    subject: 'ticket',
    body: ['body', 'public', 'author_type'],
    forceBody: { public: true, author_type: 'subscriber' },
  },
};

export function portalRuleOf(operationId: string): PortalRule | null {
  return Object.prototype.hasOwnProperty.call(PORTAL_OPERATIONS, operationId)
    ? PORTAL_OPERATIONS[operationId]
    : null;
}
