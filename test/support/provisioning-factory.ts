import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { bearer } from './factories';
import type { TestApp } from './test-app';

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
  created_at: string;
  updated_at: string;
}

export interface Service {
  id: string;
  subscriber_id: string;
  plan_id: string;
  status: string;
  pppoe_username: string;
  radius_username: string;
  static_ipv4: string | null;
  cpe_mac: string | null;
  installation_address: string | null;
  activated_at: string | null;
  terminated_at: string | null;
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

export function postPlan(t: TestApp, token: string, body: Body) {
  return request(t.http).post('/api/v1/service-plans').set(bearer(token)).send(body);
}

/** A fresh active plan (unique name, 50/10 Mbit/s, 49.99 USD monthly) with `overrides` applied. */
export async function createPlan(t: TestApp, token: string, overrides: Body = {}): Promise<ServicePlan> {
  const res = await postPlan(t, token, planBody(overrides));
  if (res.status !== 201) {
    throw new Error(`create plan: ${res.status} ${JSON.stringify(res.body)}`);
  }
  return res.body.data as ServicePlan;
}

export function postService(
  t: TestApp,
  token: string,
  subscriberId: string,
  body: Body,
  headers: Record<string, string> = {},
) {
  return request(t.http)
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
  t: TestApp,
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
  if (res.status !== 202) {
    throw new Error(`create service: ${res.status} ${JSON.stringify(res.body)}`);
  }
  return res.body.data as { service: Service; order: Order };
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

/**
 * Polls GET /provisioning-orders/{id} until the order's status is one of `statuses`, and answers it; throws with the
 * last order seen once `timeoutMs` has passed.
 */
export async function waitForOrder(
  t: TestApp,
  token: string,
  orderId: string,
  statuses: string[],
  timeoutMs = 10_000,
): Promise<Order> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const order = await getOrder(t, token, orderId);
    if (statuses.includes(order.status)) {
      return order;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `order ${orderId} still ${order.status} after ${timeoutMs} ms (waited for ${statuses.join('|')}): ` +
          JSON.stringify(order),
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
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
