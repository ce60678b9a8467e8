import request from 'supertest';
import { listAll } from './billing-factory';
import { expectList, successData } from './envelope';
import { bearer } from './factories';
import type { ReceivedMail } from './smtp-receiver';
import type { EventBody } from './subscriber-factory';
import { ensure, type TestApp } from './test-app';
import { waitUntil } from './wait-for';

/** What every notification suite's app runs with: its worker polling every 50 ms. */
export const NOTIFICATION_ENV: Record<string, string> = { NOTIFICATION_POLL_MS: '50' };

/** The instance sender of SmtpReceiver.env. */
export const INSTANCE_FROM = { name: 'Example ISP', address: 'billing@isp.example' };

export interface NotificationAttemptBody {
  attempt: number;
  outcome: 'sent' | 'temporary' | 'permanent' | 'refused';
  smtp_code: number | null;
  response: string | null;
  duration_ms: number;
  next_attempt_at: string | null;
  created_at: string;
}

/** A notification as GET /notifications and GET /notifications/{id} answer it. */
export interface NotificationBody {
  id: string;
  kind: string;
  subscriber_id: string | null;
  event_id: string;
  event_type: string;
  status: 'queued' | 'sent' | 'failed' | 'skipped';
  reason: string | null;
  recipient: string | null;
  subject: string | null;
  message_id: string | null;
  attempts: number;
  next_attempt_at: string | null;
  sent_at: string | null;
  created_at: string;
  updated_at: string;
  attempt_log: NotificationAttemptBody[];
}

export function listNotificationsRequest(t: TestApp, token: string, query: Record<string, string> = {}) {
  return request(t.http)
    .get('/api/v1/notifications')
    .query({ limit: '100', ...query })
    .set(bearer(token));
}

/** One page (up to 100) of the tenant's notifications matching `query`, newest first. */
export async function listNotifications(
  t: TestApp,
  token: string,
  query: Record<string, string> = {},
): Promise<NotificationBody[]> {
  const res = await listNotificationsRequest(t, token, query);
  expectList(res);
  return res.body.data as NotificationBody[];
}

export function getNotificationRequest(t: TestApp, token: string, id: string) {
  return request(t.http).get(`/api/v1/notifications/${id}`).set(bearer(token));
}

export async function getNotification(t: TestApp, token: string, id: string): Promise<NotificationBody> {
  return successData<NotificationBody>(await getNotificationRequest(t, token, id));
}

/**
 * Waits until the tenant has a notification matching `query` (kind, status, subscriber_id) for which `accepts`
 * holds, and that is no longer queued (unless `queuedToo`); answers it.
 */
export function settledNotification(
  t: TestApp,
  token: string,
  query: Record<string, string>,
  options: {
    accepts?: (notification: NotificationBody) => boolean;
    queuedToo?: boolean;
    timeout?: number;
  } = {},
): Promise<NotificationBody> {
  const accepts = options.accepts ?? (() => true);
  return waitUntil(
    async () => (await listNotifications(t, token, query)).find(accepts),
    (found) => found !== undefined && (options.queuedToo === true || found.status !== 'queued'),
    { what: `a settled notification ${JSON.stringify(query)}`, timeout: options.timeout ?? 30_000 },
  ) as Promise<NotificationBody>;
}

/** The notification one event caused (kind `kind`), once settled. */
export function notificationOfEvent(
  t: TestApp,
  token: string,
  kind: string,
  eventId: string,
): Promise<NotificationBody> {
  return settledNotification(t, token, { kind }, { accepts: (each) => each.event_id === eventId });
}

/** Every event of the tenant (all pages), newest first, as its raw JSON too. */
export async function allEvents(t: TestApp, token: string, query: Record<string, string> = {}) {
  return listAll<EventBody>(t, token, '/api/v1/events', query);
}

/** The events about one record of `type`, oldest first. */
export async function eventsAbout(t: TestApp, token: string, subjectId: string, type: string) {
  return (await allEvents(t, token, { subject_id: subjectId, type })).reverse();
}

export function patchTenantSettings(t: TestApp, token: string, body: unknown) {
  return request(t.http)
    .patch('/api/v1/tenant/settings')
    .set(bearer(token))
    .send(body as object);
}

export async function changeTenantSettings(t: TestApp, token: string, body: unknown) {
  const res = await patchTenantSettings(t, token, body);
  return ensure(res, 200, 'patch tenant settings').body.data as Record<string, unknown>;
}

/** The top-level header block of a raw message, folded lines unfolded: one entry per header, as sent. */
export function rawHeaders(raw: string): string[] {
  const end = raw.search(/\r?\n\r?\n/);
  const block = end === -1 ? raw : raw.slice(0, end);
  return block
    .replace(/\r?\n[ \t]+/g, ' ')
    .split(/\r?\n/)
    .filter((line) => line.length > 0);
}

/** The names of the top-level headers, lower-cased. */
export function headerNames(mail: ReceivedMail): string[] {
  return rawHeaders(mail.raw).map((line) => line.slice(0, line.indexOf(':')).trim().toLowerCase());
}

/** The mailboxes of an address header as mailparser read it: [{name, address}]. */
export function mailboxes(value: ReceivedMail['parsed']['to']): { name: string; address: string }[] {
  const list = value === undefined ? [] : Array.isArray(value) ? value : [value];
  return list.flatMap((each) => each.value.map((box) => ({ name: box.name, address: box.address ?? '' })));
}

/** The html part of a message, as text ('' when it has none). */
export function htmlOf(mail: ReceivedMail): string {
  return typeof mail.parsed.html === 'string' ? mail.parsed.html : '';
}

/** UTC day `n` days from now, YYYY-MM-DD (for due dates around the app's real clock). */
export function dayFromToday(n: number): string {
  return new Date(Date.now() + n * 86_400_000).toISOString().slice(0, 10);
}
