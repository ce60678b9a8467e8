import { randomBytes } from 'node:crypto';
import request from 'supertest';
import {
  DriverError,
  NETWORK_DRIVER,
  type NetworkDriver,
  type ProvisioningOrder as OrderEntity,
} from '../../src/provisioning';
import { expectList } from './envelope';
import { bearer } from './factories';
import { type ApiTarget, ensure, reach, type TestApp } from './test-app';
import { waitUntil } from './wait-for';

/** Every scope a provisioning suite needs: plans, services and orders, the subscribers they hang off, the event log. */
export const PROVISIONING_SCOPES = [
  'provisioning:read',
  'provisioning:write',
  'subscribers:read',
  'subscribers:write',
  'events:read',
];

export const SERVICE_ID = /^svc_[0-9A-Z]{26}$/;
export const ORDER_ID = /^ord_[0-9A-Z]{26}$/;
export const PLAN_ID = /^plan_[0-9A-Z]{26}$/;

/** The password createService gives a service unless told otherwise: a value to look for in bodies and events. */
export const DEFAULT_PPPOE_PASSWORD = 'correct-horse-42';

type Body = Record<string, unknown>;

export interface ServicePlan {
  id: string;
  name: string;
  download_kbps: number;
  upload_kbps: number;
  price: number;
  currency: string;
  billing_period: string;
  active: boolean;
  tax_rate_ids: string[] | null;
  created_at: string;
  updated_at: string;
}

export interface Service {
  id: string;
  subscriber_id: string;
  plan_id: string;
  status: string;
  external_id: string | null;
  pppoe_username: string;
  radius_username: string;
  static_ipv4: string | null;
  ip_pool_id: string | null;
  ipv6_pool_id: string | null;
  delegated_ipv6_prefix: string | null;
  cpe_mac: string | null;
  installation_address: string | null;
  activated_at: string | null;
  terminated_at: string | null;
  /** What its plan's data cap does to it now: normal, throttled or blocked. */
  cap_state: string;
  created_at: string;
  updated_at: string;
}

export interface Order {
  id: string;
  service_id: string;
  subscriber_id: string;
  action: string;
  status: string;
  plan_id: string;
  changes: string[] | null;
  reason: string | null;
  attempts: number;
  last_error: string | null;
  completed_at: string | null;
  disconnect: string | null;
  coa: string | null;
  created_at: string;
  updated_at: string;
}

export interface RadiusAttribute {
  attribute: string;
  op: string;
  value: string;
}

export interface RadiusGroup {
  groupname: string;
  priority: number;
}

export interface RadiusRows {
  check: RadiusAttribute[];
  reply: RadiusAttribute[];
  groups: RadiusGroup[];
}

/** A plan name no other test uses. */
export function uniquePlanName(prefix = 'Fiber'): string {
  return `${prefix} ${randomBytes(5).toString('hex')}`;
}

/** A PPPoE username no other test uses (lower-case letters and digits, 17 characters). */
export function uniquePppoeUsername(prefix = 'pppoe'): string {
  return `${prefix}.${randomBytes(5).toString('hex')}`;
}

export function planBody(overrides: Body = {}): Body {
  return {
    name: uniquePlanName(),
    download_kbps: 50_000,
    upload_kbps: 10_000,
    price: 4999,
    currency: 'USD',
    ...overrides,
  };
}

export function postPlan(t: ApiTarget, token: string, body: Body) {
  return request(reach(t).to).post('/api/v1/service-plans').set(bearer(token)).send(body);
}

/** A fresh active plan (unique name, 50/10 Mbit/s, 49.99 USD monthly) with `overrides` applied. */
export async function createPlan(t: ApiTarget, token: string, overrides: Body = {}): Promise<ServicePlan> {
  const res = await postPlan(t, token, planBody(overrides));
  return ensure(res, 201, 'create plan').body.data as ServicePlan;
}

export function postService(
  t: ApiTarget,
  token: string,
  subscriberId: string,
  body: Body,
  headers: Record<string, string> = {},
) {
  return request(reach(t).to)
    .post(`/api/v1/subscribers/${subscriberId}/services`)
    .set(bearer(token))
    .set(headers)
    .send(body);
}

/**
 * A service for the subscriber and its activate order (202), with a fresh pppoe_username and DEFAULT_PPPOE_PASSWORD;
 * without `overrides.plan_id`, on a fresh plan made for it.
 */
export async function createService(
  t: ApiTarget,
  token: string,
  subscriberId: string,
  overrides: Body = {},
): Promise<{ service: Service; order: Order }> {
  const planId = overrides.plan_id ?? (await createPlan(t, token)).id;
  const body = {
    pppoe_username: uniquePppoeUsername(),
    pppoe_password: DEFAULT_PPPOE_PASSWORD,
    ...overrides,
    plan_id: planId,
  };
  const res = await postService(t, token, subscriberId, body);
  return ensure(res, 202, 'create service').body.data as { service: Service; order: Order };
}

export function postAction(t: TestApp, token: string, serviceId: string, body: Body) {
  return request(t.http).post(`/api/v1/services/${serviceId}/actions`).set(bearer(token)).send(body);
}

export async function getOrder(t: TestApp, token: string, orderId: string): Promise<Order> {
  const res = await request(t.http).get(`/api/v1/provisioning-orders/${orderId}`).set(bearer(token));
  if (res.status !== 200) {
    throw new Error(`get order: ${res.status} ${JSON.stringify(res.body)}`);
  }
  return res.body.data as Order;
}

export async function getService(t: TestApp, token: string, serviceId: string): Promise<Service> {
  const res = await request(t.http).get(`/api/v1/services/${serviceId}`).set(bearer(token));
  if (res.status !== 200) {
    throw new Error(`get service: ${res.status} ${JSON.stringify(res.body)}`);
  }
  return res.body.data as Service;
}

/** The tenant's orders that match `query` (GET /provisioning-orders, at most 100), newest first. */
export async function listOrders(
  t: TestApp,
  token: string,
  query: Record<string, string> = {},
): Promise<Order[]> {
  const res = await request(t.http)
    .get('/api/v1/provisioning-orders')
    .query({ limit: '100', ...query })
    .set(bearer(token));
  expectList(res);
  return res.body.data as Order[];
}

/**
 * Polls GET /provisioning-orders/{id} until the order's status is one of `statuses`, and answers it; throws with the
 * last order seen once `timeoutMs` has passed.
 */
export async function waitForOrder(
  t: TestApp,
  token: string,
  orderId: string,
  statuses: string[],
  timeoutMs = 30_000,
): Promise<Order> {
  return waitUntil(
    () => getOrder(t, token, orderId),
    (order) => statuses.includes(order.status),
    { timeout: timeoutMs, what: `order ${orderId} ${statuses.join('|')}` },
  );
}

/** The FreeRADIUS rows of a radius username (service.radius_username), as plain objects in a stable order. */
export async function radiusRows(t: TestApp, username: string): Promise<RadiusRows> {
  const check = await t.dataSource.query<RadiusAttribute[]>(
    'SELECT attribute, op, value FROM radcheck WHERE username = $1 ORDER BY attribute, value',
    [username],
  );
  const reply = await t.dataSource.query<RadiusAttribute[]>(
    'SELECT attribute, op, value FROM radreply WHERE username = $1 ORDER BY attribute, value',
    [username],
  );
  const groups = await t.dataSource.query<{ groupname: string; priority: number | string }[]>(
    'SELECT groupname, priority FROM radusergroup WHERE username = $1 ORDER BY groupname, priority',
    [username],
  );
  return {
    check: check.map((row) => ({ attribute: row.attribute, op: row.op, value: row.value })),
    reply: reply.map((row) => ({ attribute: row.attribute, op: row.op, value: row.value })),
    groups: groups.map((row) => ({ groupname: row.groupname, priority: Number(row.priority) })),
  };
}

/** Attributes in one order whatever the database's collation. */
function sortAttributes(rows: RadiusAttribute[]): RadiusAttribute[] {
  const key = (row: RadiusAttribute) => `${row.attribute}\u0000${row.value}`;
  return [...rows].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

/** The rows of a radius username, attributes sorted as expectedRows sorts them. */
export async function rowsOf(t: TestApp, username: string): Promise<RadiusRows> {
  const rows = await radiusRows(t, username);
  return { check: sortAttributes(rows.check), reply: sortAttributes(rows.reply), groups: rows.groups };
}

/** docs/network.md: the rows a service in `status` should have, by its password, plan and static address. */
export function expectedRows(
  status: 'pending' | 'active' | 'suspended' | 'terminated',
  password: string,
  plan: Pick<ServicePlan, 'download_kbps' | 'upload_kbps'>,
  staticIpv4: string | null = null,
  username?: string,
): RadiusRows {
  const check = [{ attribute: 'Cleartext-Password', op: ':=', value: password }];
  switch (status) {
    case 'active':
      return {
        check,
        reply: sortAttributes([
          {
            attribute: 'Mikrotik-Rate-Limit',
            op: ':=',
            value: `${plan.upload_kbps}k/${plan.download_kbps}k`,
          },
          { attribute: 'WISPr-Bandwidth-Max-Down', op: ':=', value: String(plan.download_kbps * 1000) },
          { attribute: 'WISPr-Bandwidth-Max-Up', op: ':=', value: String(plan.upload_kbps * 1000) },
          ...(staticIpv4 ? [{ attribute: 'Framed-IP-Address', op: ':=', value: staticIpv4 }] : []),
        ]),
        groups: [],
      };
    case 'suspended':
      // The group of the username's tenant, `suspended:<slug>` (the realm of `<slug>/<pppoe_username>`).
      if (!username) {
        throw new Error(
          'expectedRows: a suspended service needs its radius_username (its group is its tenant’s)',
        );
      }
      return {
        check,
        reply: [],
        groups: [{ groupname: `suspended:${username.split('/')[0]}`, priority: 0 }],
      };
    case 'pending':
    case 'terminated':
      return { check: [], reply: [], groups: [] };
  }
}

// ---------- a scripted network driver ----------

/** One step a scripted driver takes before the real apply: throwing fails that attempt, a pending promise holds it. */
export type Step = (order: OrderEntity) => Promise<void>;

/** A step that fails the attempt with a DriverError (`transient`: the worker may try again). */
export const fail =
  (message: string, transient = false): Step =>
  () =>
    Promise.reject(new DriverError(message, transient));

/** A step that holds an attempt until released. */
export function gate(): { step: Step; release: () => void } {
  let release = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  return { step: () => held, release };
}

/**
 * Spies on the app's network driver: the attempts of a radius username (`<tenant slug>/<pppoe_username>`, known
 * before its service exists) first run the steps scripted for it, one per attempt; everything else (and every
 * attempt once its steps are spent) goes to the real radius-sql driver. Keyed by username, so orders other suites
 * left in the shared database never take a step meant for this one.
 */
export function scriptDriver(t: TestApp) {
  const driver = t.app.get<NetworkDriver>(NETWORK_DRIVER);
  const original = driver.apply.bind(driver);
  const scripts = new Map<string, Step[]>();
  const spy = jest.spyOn(driver, 'apply').mockImplementation(async (order, service, plan) => {
    const step = scripts.get(service.radiusUsername)?.shift();
    if (step) {
      await step(order);
    }
    return original(order, service, plan);
  });
  return {
    script(radiusUsername: string, ...steps: Step[]): void {
      scripts.set(radiusUsername, [...(scripts.get(radiusUsername) ?? []), ...steps]);
    },
    attemptsOf(orderId: string): number {
      return spy.mock.calls.filter(([order]) => order.id === orderId).length;
    },
    restore(): void {
      spy.mockRestore();
    },
  };
}

export type ScriptedDriver = ReturnType<typeof scriptDriver>;
