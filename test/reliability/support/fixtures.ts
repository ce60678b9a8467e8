import { randomBytes, randomInt } from 'node:crypto';
import { recordSecrets } from './log-capture';
import { operations, type Operation } from './openapi-operations';
import type { RawClient } from './raw-client';

/**
 * Real records for the hostile requests to aim at, so validation and lookups are reached instead of a 404: a fresh
 * tenant with one record of every collection, made with the documented request examples (as
 * test/api/openapi-examples.e2e-spec.ts does), only the ids of earlier records and globally unique values substituted.
 */

export type Ids = Record<string, string>;

export interface World {
  /** Record ids by collection (`subscribers`, `invoices`, …) plus a few by role (`invoices:draft`). */
  ids: Ids;
  tenantSlug: string;
  /** Headers every request of the world carries: the platform admin token acting for the world's tenant. */
  headers: Record<string, string>;
}

const byId = new Map(operations().map((op) => [op.operationId, op]));

function exampleOf(operationId: string): Record<string, unknown> {
  const op = byId.get(operationId);
  return structuredClone((op?.example ?? {}) as Record<string, unknown>);
}

const hex = (bytes: number) => randomBytes(bytes).toString('hex');

/** Values that must be unique across the whole database (tenants share it), fresh on every call. */
export function uniqueValues(): Record<string, unknown> {
  return {
    slug: `rel-${hex(5)}`,
    external_id: `rel-${hex(6)}`,
    email: `rel-${hex(6)}@example.net`,
    pppoe_username: `rel.${hex(6)}`,
    static_ipv4: `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`,
  };
}

/**
 * The example body of `op` made valid in `world`: fields naming records get the world's ids, fields that must be
 * unique get fresh values. Any field the example has is kept; the keys below are the ones that name things.
 */
export function validBodyFor(op: Operation, world: World): Record<string, unknown> | null {
  if (op.example === undefined) {
    return null;
  }
  const body = structuredClone(op.example) as Record<string, unknown>;
  const references: Record<string, string | undefined> = {
    subscriber_id: world.ids.subscribers,
    plan_id: world.ids['service-plans'],
    service_id: world.ids.services,
    invoice_id: world.ids.invoices,
    nas_id: world.ids.nas,
    ip_pool_id: world.ids['ip-pools'],
    tenant: world.tenantSlug,
  };
  for (const [key, value] of Object.entries({ ...references, ...uniqueValues() })) {
    if (key in body && value !== undefined) {
      body[key] = value;
    }
  }
  if (op.operationId === 'createNas' && 'ip' in body) {
    body.ip = `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;
  }
  return body;
}

/** The id for a path parameter: by the collection the parameter follows, the action's own preference first. */
export function pathFor(op: Operation, world: World, override: Record<string, string> = {}): string {
  return op.path.replace(/\{(\w+)\}/g, (_, name: string, offset: number) => {
    if (override[name] !== undefined) {
      return override[name];
    }
    const before = op.path.slice(0, offset).split('/').filter(Boolean);
    const collection = before[before.length - 1];
    const action = op.path.slice(offset).split('/').filter(Boolean)[1];
    const id = world.ids[`${collection}:${action}`] ?? world.ids[collection] ?? world.ids[name];
    return encodeURIComponent(id ?? `unknown_${name}`);
  });
}

async function must(
  client: RawClient,
  what: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<Record<string, unknown>> {
  const res = await client.json(method, path, headers, body);
  if (res.status >= 300 || !res.body.success) {
    throw new Error(`fixture ${what}: ${method} ${path} answered ${res.status} ${res.text.slice(0, 400)}`);
  }
  return res.body.data as Record<string, unknown>;
}

/** A fresh tenant with one record of each collection (and a draft and an open invoice for the invoice actions). */
export async function buildWorld(client: RawClient, adminToken: string): Promise<World> {
  const admin = { Authorization: `Bearer ${adminToken}` };
  const tenant = await must(client, 'tenant', 'POST', '/api/v1/tenants', admin, {
    ...exampleOf('createTenant'),
    slug: uniqueValues().slug,
  });
  const world: World = {
    ids: { tenants: String(tenant.id) },
    tenantSlug: String(tenant.slug),
    headers: { ...admin, 'X-Tenant-ID': String(tenant.id) },
  };
  const h = world.headers;
  const ids = world.ids;
  const token = await must(client, 'token', 'POST', '/api/v1/tokens', admin, {
    ...exampleOf('createToken'),
    tenant: world.tenantSlug,
  });
  ids.tokens = String(token.id);
  recordSecrets(token.token as string);
  ids['billing-profiles'] = String(
    (await must(client, 'profile', 'POST', '/api/v1/billing-profiles', h, exampleOf('createBillingProfile')))
      .id,
  );
  ids.subscribers = String(
    (
      await must(client, 'subscriber', 'POST', '/api/v1/subscribers', h, {
        ...exampleOf('createSubscriber'),
        ...pick(uniqueValues(), ['external_id', 'email']),
      })
    ).id,
  );
  await must(client, 'activate', 'POST', `/api/v1/subscribers/${ids.subscribers}/status`, h, {
    status: 'active',
    reason: 'fixture',
  });
  const invoice = (draft: boolean) =>
    must(client, 'invoice', 'POST', '/api/v1/invoices', h, {
      ...exampleOf('createInvoice'),
      subscriber_id: ids.subscribers,
      draft,
    });
  ids.invoices = String((await invoice(false)).id);
  ids['invoices:void'] = String((await invoice(false)).id);
  ids['invoices:finalize'] = String((await invoice(true)).id);
  // A tax rate, and a credit note of an invoice of its own (the world's open invoice stays as it is).
  ids['tax-rates'] = String(
    (await must(client, 'tax rate', 'POST', '/api/v1/tax-rates', h, exampleOf('createTaxRate'))).id,
  );
  ids['invoices:credited'] = String((await invoice(false)).id);
  ids['credit-notes'] = String(
    (
      await must(
        client,
        'credit note',
        'POST',
        `/api/v1/invoices/${ids['invoices:credited']}/credit-notes`,
        h,
        exampleOf('createCreditNote'),
      )
    ).id,
  );
  ids.transactions = String(
    (
      await must(client, 'transaction', 'POST', '/api/v1/transactions', h, {
        ...exampleOf('createTransaction'),
        subscriber_id: ids.subscribers,
        external_id: uniqueValues().external_id,
        // Held for allocation by hand, so POST /transactions/{id}/allocate has money to allocate and the world's
        // open invoice stays open (a payment is otherwise applied on receipt, issue 28 item 3).
        auto_apply: false,
      })
    ).id,
  );
  // A pending charge: the {chargeId} of DELETE /subscribers/{id}/charges/{chargeId}.
  ids.charges = String(
    (
      await must(
        client,
        'charge',
        'POST',
        `/api/v1/subscribers/${ids.subscribers}/charges`,
        h,
        exampleOf('createSubscriberCharge'),
      )
    ).id,
  );
  ids.tickets = String(
    (
      await must(client, 'ticket', 'POST', '/api/v1/tickets', h, {
        ...exampleOf('createTicket'),
        subscriber_id: ids.subscribers,
      })
    ).id,
  );
  ids['service-plans'] = String(
    (await must(client, 'plan', 'POST', '/api/v1/service-plans', h, exampleOf('createServicePlan'))).id,
  );
  const created = await must(
    client,
    'service',
    'POST',
    `/api/v1/subscribers/${ids.subscribers}/services`,
    h,
    {
      ...exampleOf('createSubscriberService'),
      ...pick(uniqueValues(), ['pppoe_username', 'static_ipv4']),
      plan_id: ids['service-plans'],
    },
  );
  ids.services = String((created.service as { id: string }).id);
  recordSecrets(exampleOf('createSubscriberService').pppoe_password as string);
  ids['provisioning-orders'] = String((created.order as { id: string }).id);
  recordSecrets(exampleOf('createNas').secret as string);
  ids.nas = String(
    (
      await must(client, 'nas', 'POST', '/api/v1/nas', h, {
        ...exampleOf('createNas'),
        ip: `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`,
      })
    ).id,
  );
  ids['ip-pools'] = String(
    (
      await must(client, 'IP pool', 'POST', '/api/v1/ip-pools', h, {
        ...exampleOf('createIpPool'),
        nas_id: ids.nas,
      })
    ).id,
  );
  const webhook = await must(client, 'webhook', 'POST', '/api/v1/webhooks', h, exampleOf('createWebhook'));
  recordSecrets(webhook.secret as string);
  ids.webhooks = String(webhook.id);
  ids['webhook-deliveries'] = String(
    (await must(client, 'delivery', 'POST', `/api/v1/webhooks/${ids.webhooks}/test`, h)).delivery_id,
  );
  const testClock = await must(
    client,
    'test clock',
    'POST',
    '/api/v1/test-clocks',
    h,
    exampleOf('createTestClock'),
  );
  recordSecrets(testClock.token as string);
  ids['test-clocks'] = String(testClock.id);
  ids['billing-runs'] = String(
    (await must(client, 'bill run', 'POST', '/api/v1/billing-runs', h, exampleOf('createBillingRun'))).id,
  );
  // An import of one subscriber (issue 32): a CSV body, which client.json cannot send.
  const upload = await client.send({
    method: 'POST',
    path: '/api/v1/imports?kind=subscribers',
    headers: { ...h, 'Content-Type': 'text/csv' },
    body: Buffer.from(`external_id,full_name,status\nimp-${randomInt(1e9)},Imported,prospect\n`),
  });
  if (upload.status !== 202) {
    throw new Error(`fixture import: answered ${upload.status} ${upload.text.slice(0, 400)}`);
  }
  ids.imports = String((JSON.parse(upload.text) as { data: { id: string } }).data.id);
  // The import worker writes the subscriber in the background: done before the suites checksum the tables.
  await waitForImport(client, h, ids.imports);
  const events = (await client.json('GET', '/api/v1/events?limit=1', h)).body.data;
  if (Array.isArray(events) && events[0]) {
    ids.events = String(events[0].id);
  }
  ids['automation/rules'] = 'overdue_invoices';
  ids.rules = 'overdue_invoices';
  ids['notification-templates'] = 'invoice_issued';
  // The open invoices above each queued an invoice_issued notification in their own statement.
  const notifications = (await client.json('GET', '/api/v1/notifications?limit=1', h)).body.data;
  if (Array.isArray(notifications) && notifications[0]) {
    ids.notifications = String(notifications[0].id);
  }
  return world;
}

async function waitForImport(client: RawClient, h: Record<string, string>, id: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    const status = (await client.json('GET', `/api/v1/imports/${id}`, h)).body.data?.status;
    if (status === 'completed' || status === 'failed') {
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`fixture import ${id}: not finished within 60 s`);
}

function pick(values: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  return Object.fromEntries(keys.map((key) => [key, values[key]]));
}
