import request from 'supertest';
import { NOTIFICATION_KIND_SPECS, NOTIFICATION_KINDS } from '../../src/notifications/kinds';
import { DEFAULT_TEMPLATES } from '../../src/notifications/templates/default-templates';
import { createInvoice } from '../support/billing-factory';
import { expectError, expectSuccess, successData } from '../support/envelope';
import { bearer } from '../support/factories';
import { createSubscriber, listEvents, uniqueEmail } from '../support/subscriber-factory';
import { createTenantWithToken, startTestApp, type TenantWithToken, type TestApp } from '../support/test-app';

const SCOPES = ['subscribers:*', 'billing:*', 'notifications:read', 'notifications:write', 'events:read'];
const PATH = '/api/v1/notification-templates';
const HOSTILE_NAME = '<script>alert(1)</script>';

interface TemplateBody {
  kind: string;
  subject: string;
  text: string;
  html: string;
  custom: boolean;
  variables: string[];
  updated_at: string | null;
}

interface PreviewBody {
  kind: string;
  to: { name: string; address: string } | null;
  subject: string;
  text: string;
  html: string;
  attachments: string[];
}

/** A receipt template naming only payment_received's variables. */
const RECEIPT = {
  subject: 'Receipt from {{tenant.name}}',
  text: 'Dear {{subscriber.name}}, we received {{payment.amount}} on {{payment.date}}.',
  html: '<p>Dear {{subscriber.name}}, we received <b>{{payment.amount}}</b> on {{payment.date}}.</p>',
};

const RECEIPT_FOR_SERVICE = {
  subject: 'Your login for {{service.plan_name}}',
  text: 'Log in as {{service.username}}.',
  html: '<p>Log in as {{service.username}}.</p>',
};

const TICKET_TEMPLATE = {
  subject: 'Re: [#{{ticket.number}}] {{ticket.subject}}',
  text: '{{comment.body}}',
  html: '<p>{{comment.body}}</p>',
};

describe('Notifications: templates per tenant and kind', () => {
  let t: TestApp;
  let tenant: TenantWithToken;

  const get = (path: string, token = tenant.token) =>
    request(t.http).get(`${PATH}${path}`).set(bearer(token));
  const put = (kind: string, body: object, token = tenant.token) =>
    request(t.http).put(`${PATH}/${kind}`).set(bearer(token)).send(body);
  const remove = (kind: string, token = tenant.token) =>
    request(t.http).delete(`${PATH}/${kind}`).set(bearer(token));
  const preview = (kind: string, body: object, token = tenant.token) =>
    request(t.http).post(`${PATH}/${kind}/preview`).set(bearer(token)).send(body);

  beforeAll(async () => {
    t = await startTestApp();
    tenant = await createTenantWithToken(t, SCOPES);
  });
  afterAll(async () => {
    await t?.close();
  });

  describe('GET', () => {
    it('should list every kind with its shipped default and the variables it may use', async () => {
      const fresh = await createTenantWithToken(t, ['notifications:read']);
      const listed = successData<TemplateBody[]>(await get('', fresh.token));
      expect(listed.map((template) => template.kind)).toEqual([...NOTIFICATION_KINDS]);
      for (const template of listed) {
        const kind = template.kind as keyof typeof DEFAULT_TEMPLATES;
        expect(template).toEqual({
          kind,
          ...DEFAULT_TEMPLATES[kind],
          custom: false,
          variables: [...NOTIFICATION_KIND_SPECS[kind].variables],
          updated_at: null,
        });
      }
    });

    it('should answer one kind with its ETag', async () => {
      const res = await get('/ticket_reply');
      const template = successData<TemplateBody>(res);
      expect(template).toMatchObject({ kind: 'ticket_reply', custom: false, updated_at: null });
      expect(res.headers.etag).toMatch(/^"[^"]+"$/);
    });

    it('should answer 404 on kind for a kind that does not exist, on every method', async () => {
      expectError(await get('/invoice_sent'), 404, 'not_found', 'kind');
      expectError(await put('invoice_sent', RECEIPT), 404, 'not_found', 'kind');
      expectError(await remove('invoice_sent'), 404, 'not_found', 'kind');
      expectError(await preview('invoice_sent', { record_id: 'inv_x' }), 404, 'not_found', 'kind');
    });
  });

  describe('PUT', () => {
    it("should save the tenant's own template, shown custom by GET and the list, with an event", async () => {
      const res = await put('payment_received', RECEIPT);
      const saved = successData<TemplateBody>(res);
      expect(saved).toEqual({
        kind: 'payment_received',
        ...RECEIPT,
        custom: true,
        variables: [...NOTIFICATION_KIND_SPECS.payment_received.variables],
        updated_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
      });
      expect(successData<TemplateBody>(await get('/payment_received'))).toEqual(saved);
      const listed = successData<TemplateBody[]>(await get(''));
      expect(listed.filter((template) => template.custom).map((template) => template.kind)).toEqual([
        'payment_received',
      ]);

      const [event] = await listEvents(t, tenant.token, {
        type: 'notification_template.updated',
        subject_id: 'payment_received',
      });
      expect(event).toMatchObject({ subject_id: 'payment_received', request_id: res.body.meta.request_id });
      expect(event.data.object).toEqual(saved);
    });

    it('should change nothing, and emit nothing, for a template sent unchanged', async () => {
      const first = successData<TemplateBody>(await put('service_activated', RECEIPT_FOR_SERVICE));
      const again = successData<TemplateBody>(await put('service_activated', RECEIPT_FOR_SERVICE));
      expect(again).toEqual(first);
      const events = await listEvents(t, tenant.token, {
        type: 'notification_template.updated',
        subject_id: 'service_activated',
      });
      expect(events).toHaveLength(1);
    });

    it('should refuse an unknown variable with 422 on the part, naming the tag, and save nothing', async () => {
      const res = await put('invoice_issued', {
        ...DEFAULT_TEMPLATES.invoice_issued,
        html: '<p>{{invoice.nope}}</p>',
      });
      expectError(res, 422, 'validation_failed', 'html');
      expect(res.body.error.message).toContain('{{invoice.nope}}');
      expect(successData<TemplateBody>(await get('/invoice_issued')).custom).toBe(false);
    });

    it('should refuse an unescaped value in the HTML, and list every problem in details', async () => {
      const res = await put('invoice_issued', {
        subject: 'Invoice {{invoice.nope}}',
        text: 'Dear {{{subscriber.name}}}',
        html: '<p>Dear {{{subscriber.name}}}</p>',
      });
      expectError(res, 422, 'validation_failed', 'subject');
      const details = res.body.error.details as { field: string; message: string }[];
      expect(details.map((detail) => detail.field)).toEqual(['subject', 'html']);
      expect(details[1].message).toContain('{{{subscriber.name}}}');
      expect(details[1].message).toContain('unescaped');
    });

    it('should refuse a body without every part as 400 missing_field', async () => {
      expectError(
        await put('payment_received', { subject: RECEIPT.subject, text: RECEIPT.text }),
        400,
        'missing_field',
        'html',
      );
    });

    it('should honour If-Match: a stale tag is 412, the current one saves', async () => {
      const current = await get('/credit_note_issued');
      expectSuccess(current);
      const template = {
        ...DEFAULT_TEMPLATES.credit_note_issued,
        subject: 'Credit note {{credit_note.number}}',
      };
      const stale = await put('credit_note_issued', template).set('If-Match', '"stale"');
      expectError(stale, 412, 'precondition_failed');
      const fresh = await put('credit_note_issued', template).set('If-Match', current.headers.etag);
      expect(successData<TemplateBody>(fresh)).toMatchObject({ custom: true, subject: template.subject });
    });
  });

  describe('DELETE', () => {
    it('should remove the own template, answer it as it was, emit an event, and restore the default', async () => {
      const saved = successData<TemplateBody>(await put('ticket_reply', TICKET_TEMPLATE));
      const res = await remove('ticket_reply');
      expect(successData<TemplateBody>(res)).toEqual(saved);
      expect(successData<TemplateBody>(await get('/ticket_reply'))).toMatchObject({
        ...DEFAULT_TEMPLATES.ticket_reply,
        custom: false,
        updated_at: null,
      });
      const [event] = await listEvents(t, tenant.token, {
        type: 'notification_template.deleted',
        subject_id: 'ticket_reply',
      });
      expect(event).toMatchObject({ request_id: res.body.meta.request_id });
      expect(event.data.object).toEqual(saved);
    });

    it('should answer 404 on kind when the tenant has no template of its own', async () => {
      expectError(await remove('invoice_reminder'), 404, 'not_found', 'kind');
    });
  });

  describe('scopes', () => {
    it('should refuse to change templates without notifications:write, and let a reader read and preview', async () => {
      const reader = await createTenantWithToken(t, ['notifications:read']);
      expectError(await put('payment_received', RECEIPT, reader.token), 403, 'insufficient_scope');
      expectError(await remove('payment_received', reader.token), 403, 'insufficient_scope');
      expectSuccess(await get('/payment_received', reader.token));
      expectError(
        await preview('invoice_issued', { record_id: 'inv_x' }, reader.token),
        422,
        'invalid_reference',
        'record_id',
      );
    });

    it('should refuse to read templates without notifications:read', async () => {
      const outsider = await createTenantWithToken(t, ['subscribers:read']);
      expectError(await get('', outsider.token), 403, 'insufficient_scope');
    });
  });

  describe('POST /{kind}/preview', () => {
    let invoice: { id: string; number: string };
    let email: string;

    beforeAll(async () => {
      email = uniqueEmail();
      const subscriber = await createSubscriber(t, tenant.token, { full_name: HOSTILE_NAME, email });
      invoice = (await createInvoice(t, tenant.token, subscriber.id, 4999)) as unknown as {
        id: string;
        number: string;
      };
    });

    it('should render an issued invoice with the default template, escaping values in the HTML only', async () => {
      const res = await preview('invoice_issued', { record_id: invoice.id });
      const shown = successData<PreviewBody>(res);
      expect(res.headers['idempotent-replayed']).toBeUndefined();
      expect(shown.kind).toBe('invoice_issued');
      expect(shown.to).toEqual({ name: HOSTILE_NAME, address: email });
      expect(shown.subject).toContain(invoice.number);
      expect(shown.text).toContain(invoice.number);
      expect(shown.text).toContain('$49.99');
      expect(shown.text).toContain(`Dear ${HOSTILE_NAME},`);
      expect(shown.html).toContain('$49.99');
      expect(shown.html).toContain('&lt;script&gt;alert(1)&lt;&#x2F;script&gt;');
      expect(shown.html).not.toContain('<script>');
      expect(shown.attachments).toEqual([`${invoice.number}.pdf`]);
    });

    it('should render a template sent with the request, without saving it', async () => {
      const template = {
        subject: 'Pay {{invoice.number}}',
        text: 'Owed: {{invoice.amount_due}}, {{subscriber.name}}',
        html: '<h1>{{invoice.number}}</h1><p>{{subscriber.name}}</p>',
      };
      const shown = successData<PreviewBody>(
        await preview('invoice_issued', { record_id: invoice.id, template }),
      );
      expect(shown.subject).toBe(`Pay ${invoice.number}`);
      expect(shown.text).toBe(`Owed: $49.99, ${HOSTILE_NAME}`);
      expect(shown.html).toBe(`<h1>${invoice.number}</h1><p>&lt;script&gt;alert(1)&lt;&#x2F;script&gt;</p>`);
      expect(successData<TemplateBody>(await get('/invoice_issued')).custom).toBe(false);
    });

    it('should check a template sent with the request as a save does, on template.<part>', async () => {
      const res = await preview('invoice_issued', {
        record_id: invoice.id,
        template: { ...DEFAULT_TEMPLATES.invoice_issued, html: '{{{subscriber.name}}}' },
      });
      expectError(res, 422, 'validation_failed', 'template.html');
    });

    it('should answer 422 on record_id, saying what the kind previews, for a record without its event', async () => {
      const subscriber = await createSubscriber(t, tenant.token);
      const draft = await createInvoice(t, tenant.token, subscriber.id, 1000, { draft: true });
      const res = await preview('invoice_issued', { record_id: draft.id });
      expectError(res, 422, 'invalid_reference', 'record_id');
      expect(res.body.error.message).toContain('issued invoice');
      // An invoice is not what a payment receipt is rendered from.
      const wrong = await preview('payment_received', { record_id: invoice.id });
      expectError(wrong, 422, 'invalid_reference', 'record_id');
      expect(wrong.body.error.message).toContain('payment');
    });

    it("should render with the tenant's saved template once there is one, and send nothing", async () => {
      await put('invoice_issued', {
        subject: 'Your bill {{invoice.number}}',
        text: 'Total {{invoice.total}}',
        html: '<p>Total {{invoice.total}}</p>',
      }).expect(200);
      const shown = successData<PreviewBody>(await preview('invoice_issued', { record_id: invoice.id }));
      expect(shown).toMatchObject({ subject: `Your bill ${invoice.number}`, text: 'Total $49.99' });
      const [{ count }] = await t.dataSource.query<{ count: number }[]>(
        `SELECT count(*)::int AS count FROM notifications WHERE tenant_id = $1 AND kind = 'invoice_issued'`,
        [tenant.tenantId],
      );
      // The invoice's own notification, queued by its finalization; the previews added none.
      expect(count).toBe(1);
    });
  });
});
