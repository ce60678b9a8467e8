import { EVENT_TYPES } from '../events';
import {
  alwaysSent,
  isNotificationKind,
  NOTIFICATION_KIND_SPECS,
  NOTIFICATION_KINDS,
  SWITCHABLE_KINDS,
  TEMPLATE_VARIABLES,
} from './kinds';

describe('notification kinds', () => {
  it('are the kinds of issue 31, each with its spec', () => {
    expect([...NOTIFICATION_KINDS].sort()).toEqual(Object.keys(NOTIFICATION_KIND_SPECS).sort());
    expect(NOTIFICATION_KINDS).toEqual([
      'invoice_issued',
      'payment_received',
      'credit_note_issued',
      'invoice_reminder',
      'suspended_for_non_payment',
      'service_restored',
      'service_activated',
      'ticket_reply',
      'portal_invite',
      'portal_sign_in_code',
    ]);
  });

  it('are each triggered by an event the service emits', () => {
    for (const kind of NOTIFICATION_KINDS) {
      expect(Object.keys(EVENT_TYPES)).toContain(NOTIFICATION_KIND_SPECS[kind].trigger.event);
    }
  });

  it.each([
    ['invoice_issued', 'invoice.finalized'],
    ['payment_received', 'transaction.created'],
    ['credit_note_issued', 'credit_note.created'],
    ['invoice_reminder', 'invoice.reminder'],
    ['suspended_for_non_payment', 'subscriber.status_changed'],
    ['service_restored', 'subscriber.status_changed'],
    ['service_activated', 'service.activated'],
    ['ticket_reply', 'ticket.comment_added'],
    ['portal_invite', 'portal.invite_created'],
    ['portal_sign_in_code', 'portal.sign_in_code_requested'],
  ] as const)('%s is sent on %s', (kind, event) => {
    expect(NOTIFICATION_KIND_SPECS[kind].trigger.event).toBe(event);
  });

  it('let the subscriber switch off everything but invoices, credit notes and the portal sign-in mail', () => {
    const legal = NOTIFICATION_KINDS.filter((kind) => NOTIFICATION_KIND_SPECS[kind].legalNotice);
    expect(legal).toEqual(['invoice_issued', 'credit_note_issued']);
    const always = NOTIFICATION_KINDS.filter(alwaysSent);
    expect(always).toEqual(['invoice_issued', 'credit_note_issued', 'portal_invite', 'portal_sign_in_code']);
    expect(SWITCHABLE_KINDS).toEqual(NOTIFICATION_KINDS.filter((kind) => !always.includes(kind)));
    expect(SWITCHABLE_KINDS).toContain('payment_received');
  });

  it('name only variables of the catalogue, each once, the subscriber and the tenant in every kind', () => {
    for (const kind of NOTIFICATION_KINDS) {
      const { variables } = NOTIFICATION_KIND_SPECS[kind];
      expect(new Set(variables).size).toBe(variables.length);
      for (const name of variables) {
        expect(Object.keys(TEMPLATE_VARIABLES)).toContain(name);
      }
      expect(variables).toEqual(expect.arrayContaining(['subscriber.name', 'tenant.name']));
    }
  });

  it('use every variable of the catalogue in some kind', () => {
    const used = new Set(NOTIFICATION_KINDS.flatMap((kind) => NOTIFICATION_KIND_SPECS[kind].variables));
    expect([...used].sort()).toEqual(Object.keys(TEMPLATE_VARIABLES).sort());
  });

  it('never offer a password or a secret to a template', () => {
    for (const name of Object.keys(TEMPLATE_VARIABLES)) {
      expect(name).not.toMatch(/password|secret|token/i);
    }
    expect(NOTIFICATION_KIND_SPECS.service_activated.variables).toContain('service.username');
  });

  it('tells a kind from any other value', () => {
    expect(isNotificationKind('ticket_reply')).toBe(true);
    expect(isNotificationKind('ticket.comment_added')).toBe(false);
    expect(isNotificationKind('constructor')).toBe(false);
    expect(isNotificationKind(undefined)).toBe(false);
  });
});
