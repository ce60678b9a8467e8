import { randomInt } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { uniqueSlug, type TestApp, appSuite } from '../support/test-app';
import { waitUntil } from '../support/wait-for';

/**
 * Swagger's Try-it-out, replayed: every POST and PATCH of the committed openapi.json, in the order an integrator calls
 * them, sent with its documented request example and answered with its documented 2xx. Only what a fresh server cannot
 * know in advance is substituted: ids of records created by earlier steps (path parameters, subscriber_id, the
 * token's tenant) and the tenant slug (the test database is shared by the suites, so `acme-fiber` may be taken).
 * Everything after the tenant runs inside it, so the examples' external_id and email are fresh there.
 */
interface Operation {
  operationId: string;
  requestBody?: {
    content: Record<string, { examples?: Record<string, { value: Record<string, unknown> | string }> }>;
  };
  responses: Record<string, unknown>;
}

const document = JSON.parse(readFileSync(join(__dirname, '..', '..', 'openapi.json'), 'utf8')) as {
  paths: Record<string, Record<string, Operation>>;
};

const writes = Object.entries(document.paths).flatMap(([path, item]) =>
  (['post', 'patch'] as const).flatMap((method) =>
    item[method] ? [{ path, method, operation: item[method] }] : [],
  ),
);

type Ids = Record<string, string>;

interface Step {
  operationId: string;
  /** Path parameters, from the ids of earlier steps. */
  params?: (ids: Ids) => Record<string, string>;
  /** Fields of the example that name records of earlier steps (or must be unique in the shared database). */
  body?: (ids: Ids) => Record<string, unknown>;
  /** What of the answer later steps need. */
  keep?: (data: Record<string, unknown>, ids: Ids) => void;
  /** Query parameters the operation needs besides its body (an upload's kind). */
  query?: Record<string, string>;
  /**
   * A record the example needs that no POST example makes (a draft invoice to finalize, an open one to void or write
   * off).
   */
  before?: (ids: Ids) => Promise<void>;
}

describe('OpenAPI request examples, replayed in order on a fresh tenant', () => {
  let t: TestApp;
  const ids: Ids = {};

  const call = (method: 'post' | 'patch', url: string) => {
    const req = request(t.http)[method](url).set('Authorization', `Bearer ${t.adminToken}`);
    return ids.tenant ? req.set('X-Tenant-ID', ids.tenant) : req;
  };

  const draftInvoice = async (key: string): Promise<void> => {
    const answer = await call('post', '/api/v1/invoices')
      .send({
        subscriber_id: ids.subscriber,
        currency: 'USD',
        due_date: '2026-12-15',
        lines: [{ description: 'Installation', quantity: 1, unit_amount: 1500 }],
        draft: key === 'draft',
      })
      .expect(201);
    ids[key] = answer.body.data.id as string;
  };

  const steps: Step[] = [
    {
      operationId: 'createTenant',
      body: () => ({ slug: uniqueSlug('acme-fiber') }),
      keep: (data, all) => {
        all.tenant = data.id as string;
        all.slug = data.slug as string;
      },
    },
    { operationId: 'createToken', body: (all) => ({ tenant: all.slug }) },
    { operationId: 'createTaxRate', keep: (data, all) => (all.taxRate = data.id as string) },
    { operationId: 'updateTaxRate', params: (all) => ({ id: all.taxRate }) },
    { operationId: 'createBillingProfile', keep: (data, all) => (all.profile = data.id as string) },
    { operationId: 'updateBillingProfile', params: (all) => ({ id: all.profile }) },
    {
      operationId: 'createSubscriber',
      // Billed on the profile just made, so every money example after it must be in that profile's currency.
      body: (all) => ({ billing_profile_id: all.profile }),
      keep: (data, all) => (all.subscriber = data.id as string),
    },
    { operationId: 'updateSubscriber', params: (all) => ({ id: all.subscriber }) },
    { operationId: 'updateNotificationPreferences', params: (all) => ({ id: all.subscriber }) },
    {
      operationId: 'createPortalInvite',
      params: (all) => ({ id: all.subscriber }),
      // The example mails the invite (delivery email), whose code only the mail holds: here it is handed back.
      body: () => ({ delivery: 'link' }),
      keep: (data, all) => (all.inviteCode = data.code as string),
    },
    // The example's invite code is a made-up one: the invite just made signs in.
    { operationId: 'createPortalSession', body: (all) => ({ invite_code: all.inviteCode }) },
    { operationId: 'createPortalSignInCode', body: (all) => ({ tenant: all.slug }) },
    { operationId: 'changeSubscriberStatus', params: (all) => ({ id: all.subscriber }) },
    {
      operationId: 'createInvoice',
      body: (all) => ({ subscriber_id: all.subscriber }),
      keep: (data, all) => (all.invoice = data.id as string),
    },
    {
      operationId: 'previewNotificationTemplate',
      params: () => ({ kind: 'invoice_issued' }),
      body: (all) => ({ record_id: all.invoice }),
    },
    {
      operationId: 'createTransaction',
      body: (all) => ({ subscriber_id: all.subscriber }),
      keep: (data, all) => (all.transaction = data.id as string),
    },
    { operationId: 'allocateTransaction', params: (all) => ({ transaction_id: all.transaction }) },
    {
      operationId: 'finalizeInvoice',
      before: () => draftInvoice('draft'),
      params: (all) => ({ id: all.draft }),
    },
    { operationId: 'voidInvoice', before: () => draftInvoice('open'), params: (all) => ({ id: all.open }) },
    {
      operationId: 'writeOffInvoice',
      before: () => draftInvoice('owed'),
      params: (all) => ({ id: all.owed }),
    },
    // A credit note against the example invoice (open, or paid by the example payment): within what it invoiced.
    { operationId: 'createCreditNote', params: (all) => ({ id: all.invoice }) },
    // A pending charge for the subscriber: the next invoice issued to it in its currency carries it.
    { operationId: 'createSubscriberCharge', params: (all) => ({ id: all.subscriber }) },
    { operationId: 'updateTicketSettings' },
    { operationId: 'updateTenantSettings' },
    {
      operationId: 'createTicket',
      body: (all) => ({ subscriber_id: all.subscriber }),
      keep: (data, all) => (all.ticket = data.id as string),
    },
    { operationId: 'updateTicket', params: (all) => ({ id: all.ticket }) },
    { operationId: 'changeTicketStatus', params: (all) => ({ id: all.ticket }) },
    { operationId: 'createTicketComment', params: (all) => ({ id: all.ticket }) },
    { operationId: 'createServicePlan', keep: (data, all) => (all.plan = data.id as string) },
    { operationId: 'updateServicePlan', params: (all) => ({ id: all.plan }) },
    {
      operationId: 'createSubscriberService',
      params: (all) => ({ id: all.subscriber }),
      body: (all) => ({ plan_id: all.plan }),
      keep: (data, all) => {
        all.service = (data.service as { id: string }).id;
        all.order = (data.order as { id: string }).id;
      },
    },
    { operationId: 'updateService', params: (all) => ({ id: all.service }) },
    // The example plan has a data cap: a top-up adds to it (and charges the subscriber).
    { operationId: 'createServiceTopUp', params: (all) => ({ id: all.service }) },
    // The worker is off here, so the activate order waits to be cancelled, and the service stays pending.
    { operationId: 'cancelProvisioningOrder', params: (all) => ({ id: all.order }) },
    { operationId: 'actOnService', params: (all) => ({ id: all.service }) },
    { operationId: 'createBillingRun' },
    {
      operationId: 'createImport',
      query: { kind: 'subscribers' },
      keep: (data, all) => (all.import = data.id as string),
    },
    { operationId: 'createTestClock', keep: (data, all) => (all.clock = data.id as string) },
    { operationId: 'advanceTestClock', params: (all) => ({ id: all.clock }) },
    {
      operationId: 'createNas',
      // One FreeRADIUS client per address, across tenants: an address of this run's own.
      body: () => ({ ip: `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}` }),
      keep: (data, all) => (all.nas = data.id as string),
    },
    { operationId: 'updateNas', params: (all) => ({ id: all.nas }) },
    { operationId: 'createIpPool', keep: (data, all) => (all.ipPool = data.id as string) },
    { operationId: 'updateIpPool', params: (all) => ({ id: all.ipPool }) },
    { operationId: 'updateNetworkSettings' },
    { operationId: 'updateAutomationRule', params: () => ({ rule: 'overdue_invoices' }) },
    { operationId: 'createWebhook', keep: (data, all) => (all.webhook = data.id as string) },
    { operationId: 'updateWebhook', params: (all) => ({ id: all.webhook }) },
    { operationId: 'rotateWebhookSecret', params: (all) => ({ id: all.webhook }) },
    {
      operationId: 'testWebhook',
      params: (all) => ({ id: all.webhook }),
      keep: (data, all) => (all.delivery = data.delivery_id as string),
    },
    { operationId: 'redeliverWebhookDelivery', params: (all) => ({ id: all.delivery }) },
  ];

  // example.com is a public name, but the test machine may resolve nothing; and no delivery should go out.
  appSuite((app) => (t = app), {
    WEBHOOK_ALLOW_PRIVATE: 'true',
    WEBHOOK_WORKER_ENABLED: 'false',
    PROVISIONING_WORKER_ENABLED: 'false',
    // The bill run and automation workers poll quickly: the example advance walks 45 days of runs and dunning.
    AUTOMATION_POLL_MS: '50',
  });

  it('should cover every POST and PATCH of the document', () => {
    const covered = steps.map((step) => step.operationId).sort();
    expect(writes.map(({ operation }) => operation.operationId).sort()).toEqual(covered);
  });

  it('should answer every request example with its documented 2xx, in order', async () => {
    for (const step of steps) {
      const write = writes.find(({ operation }) => operation.operationId === step.operationId);
      if (!write) {
        throw new Error(`${step.operationId} is not a POST or PATCH of openapi.json`);
      }
      const { path, method, operation } = write;
      const documented = Object.keys(operation.responses).filter((status) => status.startsWith('2'));
      expect({ operation: step.operationId, documented: documented.length }).toEqual({
        operation: step.operationId,
        documented: 1,
      });
      // The first media type documented: JSON for all but an upload, whose file is a text (text/csv).
      const [mediaType, media] = Object.entries(operation.requestBody?.content ?? {})[0] ?? [];
      const example = media?.examples?.default?.value;
      expect({ operation: step.operationId, hasBody: operation.requestBody !== undefined }).toEqual({
        operation: step.operationId,
        hasBody: example !== undefined,
      });
      await step.before?.(ids);
      const params = step.params?.(ids) ?? {};
      const url = path.replace(/\{(\w+)\}/g, (_, name: string) => params[name] ?? `{${name}}`);
      const req = call(method, url).query(step.query ?? {});
      const answer =
        typeof example === 'string'
          ? await req.set('Content-Type', mediaType).send(example)
          : example
            ? await req.send({ ...example, ...step.body?.(ids) })
            : await req.send();
      expect({ operation: step.operationId, status: answer.status, body: answer.body as unknown }).toEqual({
        operation: step.operationId,
        status: Number(documented[0]),
        body: expect.objectContaining({ success: true }),
      });
      step.keep?.(answer.body.data as Record<string, unknown>, ids);
    }
    // The import and the advance go on in the background: waited for, so that no later suite's app (on the same
    // database) takes them over once this app is closed.
    const read = (path: string) =>
      request(t.http).get(path).set('Authorization', `Bearer ${t.adminToken}`).set('X-Tenant-ID', ids.tenant);
    await waitUntil(
      () => read(`/api/v1/imports/${ids.import}`),
      (res) => ['completed', 'failed'].includes(res.body.data?.status as string),
      { what: 'the example import ended', timeout: 60_000 },
    );
    await waitUntil(
      () => read(`/api/v1/test-clocks/${ids.clock}`),
      (res) => res.body.data?.status === 'ready',
      // 45 days, each a bill run and a day of dunning: well under a minute alone, minutes on a loaded machine.
      { what: 'the example test clock ready', timeout: 300_000 },
    );
  }, 420_000);
});
