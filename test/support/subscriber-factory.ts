import { randomBytes } from 'node:crypto';
import request, { type Response } from 'supertest';
import { expectList, expectSuccess } from './envelope';
import { bearer } from './factories';
import { type ApiTarget, ensure, reach, type TestApp } from './test-app';

export const SUBSCRIBER_ID = /^sub_[0-9A-Z]{26}$/;
export const BILLING_PROFILE_ID = /^bp_[0-9A-Z]{26}$/;
export const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** The only fields of the create answer (README, Subscribers: "POST /api/v1/subscribers"). */
export const CREATED_SUBSCRIBER_KEYS = [
  'billing_profile_id',
  'created_at',
  'external_id',
  'full_name',
  'id',
  'status',
];

/** Reads return the full record (README, Subscribers). */
export const SUBSCRIBER_KEYS = [
  ...CREATED_SUBSCRIBER_KEYS,
  'address',
  'email',
  'metadata',
  'phone',
  'suspension_reason',
  'tax_exempt',
  'tax_exempt_reason',
  'tax_id',
  'updated_at',
].sort();

export const BILLING_PROFILE_KEYS = [
  'auto_apply',
  'auto_suspend_after_days',
  'billing_day',
  'created_at',
  'currency',
  'fees_before_restoration',
  'id',
  'is_default',
  'late_fee',
  'name',
  'payment_terms_days',
  'reconnection_fee',
  'reminder_offsets',
  'tax_rate_ids',
  'updated_at',
];

export type SubscriberStatus = 'prospect' | 'pending' | 'active' | 'suspended' | 'cancelled' | 'archived';

export const SUBSCRIBER_STATUSES: SubscriberStatus[] = [
  'prospect',
  'pending',
  'active',
  'suspended',
  'cancelled',
  'archived',
];

/** Every token a subscriber suite needs: read and write subscribers, read the event log. */
export const SUBSCRIBER_SCOPES = ['subscribers:read', 'subscribers:write', 'events:read'];

export type Body = Record<string, unknown>;

export interface CreatedSubscriber {
  id: string;
  external_id: string | null;
  full_name: string;
  status: SubscriberStatus;
  billing_profile_id: string | null;
  created_at: string;
}

export interface SubscriberRecord extends CreatedSubscriber {
  email: string | null;
  phone: string | null;
  suspension_reason: string | null;
  address: Record<string, string | null> | null;
  metadata: Record<string, unknown>;
  updated_at: string;
  tax_exempt: boolean;
  tax_exempt_reason: string | null;
  tax_id: string | null;
}

export interface BillingProfile {
  id: string;
  name: string;
  currency: string;
  billing_day: number;
  payment_terms_days: number;
  auto_suspend_after_days: number | null;
  is_default: boolean;
  auto_apply: boolean;
  reminder_offsets: number[];
  late_fee: Record<string, unknown> | null;
  reconnection_fee: number | null;
  fees_before_restoration: boolean;
  tax_rate_ids: string[];
  created_at: string;
  updated_at: string;
}

export interface EventBody {
  id: string;
  type: string;
  subject_id: string | null;
  data: { object: Record<string, unknown>; [key: string]: unknown };
  request_id: string | null;
  actor: { type: string; id: string | null };
  created_at: string;
}

/** A value no other test uses, e.g. for external_id. */
export function uniqueRef(prefix = 'crm'): string {
  return `${prefix}-${randomBytes(6).toString('hex')}`;
}

export function uniqueEmail(): string {
  return `ada.${randomBytes(6).toString('hex')}@example.net`;
}

export function longString(length: number, char = 'a'): string {
  return char.repeat(length);
}

/** The smallest valid create body, with a fresh external_id. */
export function subscriberBody(overrides: Body = {}): Body {
  return { external_id: uniqueRef(), full_name: 'Ada Lovelace', status: 'prospect', ...overrides };
}

/** A create body with every optional field set. */
export function fullSubscriberBody(overrides: Body = {}): Body {
  return subscriberBody({
    email: uniqueEmail(),
    phone: '+14155550123',
    address: { line1: '12 Fibre Lane', city: 'Springfield', state: 'IL', postal_code: '62701' },
    metadata: { plan: 'fiber-500', floor: 3, business: false },
    ...overrides,
  });
}

export function postSubscriber(
  t: ApiTarget,
  token: string,
  body: Body,
  headers: Record<string, string> = {},
) {
  return request(reach(t).to).post('/api/v1/subscribers').set(bearer(token)).set(headers).send(body);
}

export async function createSubscriber(t: ApiTarget, token: string, overrides: Body = {}) {
  const res = await postSubscriber(t, token, subscriberBody(overrides));
  return ensure(res, 201, 'create subscriber').body.data as CreatedSubscriber;
}

export function postStatus(t: TestApp, token: string, id: string, status: string, reason?: string) {
  return request(t.http)
    .post(`/api/v1/subscribers/${id}/status`)
    .set(bearer(token))
    .send(reason === undefined ? { status } : { status, reason });
}

/** The reason a move to `to` needs: suspending requires one, other moves take none. */
export function reasonFor(to: string): string | undefined {
  return to === 'suspended' ? 'non_payment' : undefined;
}

/**
 * A subscriber in `status`, reached only through allowed moves: the creatable states directly, cancelled through
 * active → cancelled, archived through prospect → archived.
 */
export async function createSubscriberInState(
  t: TestApp,
  token: string,
  status: SubscriberStatus,
  overrides: Body = {},
): Promise<CreatedSubscriber> {
  const path: Record<SubscriberStatus, [SubscriberStatus, SubscriberStatus[]]> = {
    prospect: ['prospect', []],
    pending: ['pending', []],
    active: ['active', []],
    suspended: ['suspended', []],
    cancelled: ['active', ['cancelled']],
    archived: ['prospect', ['archived']],
  };
  const [initial, moves] = path[status];
  const subscriber = await createSubscriber(t, token, { ...overrides, status: initial });
  for (const to of moves) {
    const res: Response = await postStatus(t, token, subscriber.id, to, reasonFor(to));
    if (res.status !== 200) {
      throw new Error(`move to ${to}: ${res.status} ${JSON.stringify(res.body)}`);
    }
  }
  return { ...subscriber, status };
}

export async function getSubscriber(t: TestApp, token: string, id: string): Promise<SubscriberRecord> {
  const res = await request(t.http).get(`/api/v1/subscribers/${id}`).set(bearer(token));
  if (res.status !== 200) {
    throw new Error(`get subscriber: ${res.status} ${JSON.stringify(res.body)}`);
  }
  return res.body.data as SubscriberRecord;
}

/** The ids a list of subscribers answers for this query (one page, up to 100). */
export async function listSubscriberIds(t: TestApp, token: string, query = ''): Promise<string[]> {
  const separator = query ? '&' : '';
  const res = await request(t.http)
    .get(`/api/v1/subscribers?limit=100${separator}${query}`)
    .set(bearer(token));
  expectList(res);
  return (res.body.data as SubscriberRecord[]).map((row) => row.id);
}

export function billingProfileBody(overrides: Body = {}): Body {
  return { name: 'Residential monthly', currency: 'USD', billing_day: 1, ...overrides };
}

export function postBillingProfile(t: TestApp, token: string, body: Body) {
  return request(t.http).post('/api/v1/billing-profiles').set(bearer(token)).send(body);
}

export async function createBillingProfile(t: TestApp, token: string, overrides: Body = {}) {
  const res = await postBillingProfile(t, token, billingProfileBody(overrides));
  if (res.status !== 201) {
    throw new Error(`create billing profile: ${res.status} ${JSON.stringify(res.body)}`);
  }
  return res.body.data as BillingProfile;
}

/** The tenant's events, newest first (a token with events:read or admin). */
export async function listEvents(t: TestApp, token: string, query: Record<string, string>) {
  const res = await request(t.http)
    .get('/api/v1/events')
    .query({ limit: '100', ...query })
    .set(bearer(token));
  expectList(res);
  return res.body.data as EventBody[];
}

/**
 * The one event a create answered by `res` (201) wrote: of `type`, about the record created, under the request's id.
 */
export async function createdEvent(
  t: TestApp,
  token: string,
  res: Response,
  type: string,
): Promise<EventBody> {
  expectSuccess(res, 201);
  const events = await listEvents(t, token, { subject_id: res.body.data.id });
  expect(events).toHaveLength(1);
  expect(events[0]).toMatchObject({
    type,
    subject_id: res.body.data.id,
    request_id: res.body.meta.request_id,
  });
  return events[0];
}

/**
 * Makes the app listen on a loopback port, so requests fired at once share one server (supertest would otherwise
 * start and close a server per request). Closed with the app.
 */
export async function listen(t: TestApp): Promise<void> {
  if (t.http.listening) {
    return;
  }
  await new Promise<void>((resolve) => t.http.listen(0, '127.0.0.1', resolve));
}
