import { randomBytes, randomInt } from 'node:crypto';
import request from 'supertest';
import { Clock } from '../../src/common/clock';
import { addDays } from '../../src/common/dates';
import { bearer } from './factories';
import type { Order } from './provisioning-factory';
import type { TestApp } from './test-app';

/** The provisioning worker of test/provisioning/radius.e2e-spec.ts: retries and polls in tens of milliseconds. */
export const FAST_WORKER = { PROVISIONING_RETRY_DELAYS_S: '0.05,0.05', PROVISIONING_POLL_MS: '50' };

/** Disconnect/CoA requests wait 200 ms per try and are sent once more: a silent NAS costs 400 ms. */
export const FAST_COA = { RADIUS_COA_TIMEOUT_MS: '200', RADIUS_COA_RETRIES: '1' };

export const NAS_ID = /^nas_[0-9A-Z]{26}$/;

/** The fields of a NasDto, in key order: never `secret`. */
export const NAS_FIELDS = ['coa_port', 'created_at', 'description', 'id', 'ip', 'name', 'type', 'updated_at'];

export interface Nas {
  id: string;
  name: string;
  ip: string;
  type: string;
  coa_port: number;
  description: string | null;
  created_at: string;
  updated_at: string;
}

export interface Session {
  id: string;
  service_id: string;
  acct_session_id: string;
  username: string;
  online: boolean;
  started_at: string | null;
  updated_at: string | null;
  stopped_at: string | null;
  duration_s: number | null;
  nas_ip: string;
  framed_ip: string | null;
  bytes_in: number;
  bytes_out: number;
  terminate_cause: string | null;
}

export interface Usage {
  service_id: string;
  from: string;
  to: string;
  days: { date: string; bytes_in: number; bytes_out: number }[];
  total: { bytes_in: number; bytes_out: number };
}

/** An order with the outcome of its Disconnect/CoA requests. */
export type NetworkOrder = Order & { disconnect: string | null; coa: string | null };

/**
 * The app's Clock on the system's time, except while a test pins it to an instant (the usage defaults read
 * Clock.today()). Unpinned, the provisioning worker's completion times are real ones, as the service's created_at.
 */
export class PinnableClock extends Clock {
  private pinned: number | null = null;

  protected override systemNow(): Date {
    return this.pinned === null ? new Date() : new Date(this.pinned);
  }

  pin(at: string | Date): void {
    this.pinned = new Date(at).getTime();
  }

  unpin(): void {
    this.pinned = null;
  }
}

/** A RADIUS shared secret no other test uses (printable ASCII, no spaces). */
export function uniqueSecret(label = 'nas'): string {
  return `${label}-S3cr3t!${randomBytes(8).toString('hex')}`;
}

/** A random unicast address in 100.64.0.0/10 (shared address space), for a NAS nobody reaches. */
export function randomNasIp(): string {
  return `100.${64 + randomInt(64)}.${randomInt(256)}.${1 + randomInt(254)}`;
}

/** A random loopback address 127.x.y.z (Linux routes all of 127/8 to lo): where a fake NAS listens. */
export function randomLoopback(): string {
  return `127.${randomInt(256)}.${randomInt(256)}.${1 + randomInt(254)}`;
}

export function nasBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: `bng-${randomBytes(4).toString('hex')}`,
    ip: randomNasIp(),
    secret: uniqueSecret(),
    ...overrides,
  };
}

export function postNas(t: TestApp, token: string, body: unknown) {
  return request(t.http)
    .post('/api/v1/nas')
    .set(bearer(token))
    .send(body as object);
}

export function getNas(t: TestApp, token: string, id: string) {
  return request(t.http).get(`/api/v1/nas/${id}`).set(bearer(token));
}

export function patchNas(t: TestApp, token: string, id: string, body: unknown) {
  return request(t.http)
    .patch(`/api/v1/nas/${id}`)
    .set(bearer(token))
    .send(body as object);
}

export function deleteNas(t: TestApp, token: string, id: string) {
  return request(t.http).delete(`/api/v1/nas/${id}`).set(bearer(token));
}

export function listNas(t: TestApp, token: string, query: Record<string, string> = {}) {
  return request(t.http).get('/api/v1/nas').query(query).set(bearer(token));
}

/** A NAS registered through the API (201), with `overrides` applied to nasBody(). */
export async function createNas(
  t: TestApp,
  token: string,
  overrides: Record<string, unknown> = {},
): Promise<Nas> {
  const res = await postNas(t, token, nasBody(overrides));
  if (res.status !== 201) {
    throw new Error(`create NAS: ${res.status} ${JSON.stringify(res.body)}`);
  }
  return res.body.data as Nas;
}

export interface NasClientRow {
  nasname: string;
  shortname: string;
  type: string;
  secret: string;
  description: string | null;
}

/** FreeRADIUS's client rows (`nas` table) of an address. */
export function nasClientRows(t: TestApp, ip: string): Promise<NasClientRow[]> {
  return t.dataSource.query<NasClientRow[]>(
    'SELECT nasname, shortname, type, secret, description FROM nas WHERE nasname = $1',
    [ip],
  );
}

/** The radacct columns a test may set (FreeRADIUS's layout). */
export interface RadacctRow {
  acctsessionid: string;
  acctuniqueid?: string;
  username: string;
  nasipaddress: string;
  acctstarttime?: string | Date | null;
  acctupdatetime?: string | Date | null;
  acctstoptime?: string | Date | null;
  acctsessiontime?: number | null;
  acctinputoctets?: number | null;
  acctoutputoctets?: number | null;
  framedipaddress?: string | null;
  acctterminatecause?: string | null;
}

const RADACCT_COLUMNS = [
  'acctsessionid',
  'acctuniqueid',
  'username',
  'nasipaddress',
  'acctstarttime',
  'acctupdatetime',
  'acctstoptime',
  'acctsessiontime',
  'acctinputoctets',
  'acctoutputoctets',
  'framedipaddress',
  'acctterminatecause',
] as const;

/** An Acct-Session-Id no other test uses, as a NAS names sessions (8 hex digits). */
export function uniqueAcctSessionId(): string {
  return randomBytes(4).toString('hex').toUpperCase();
}

/** Inserts one radacct row as FreeRADIUS does on an Accounting Start; answers its radacctid. */
export async function insertRadacct(t: TestApp, row: RadacctRow): Promise<string> {
  const full: Record<string, unknown> = { acctuniqueid: randomBytes(16).toString('hex'), ...row };
  const columns = RADACCT_COLUMNS.filter((column) => full[column] !== undefined);
  const rows = await t.dataSource.query<{ radacctid: string }[]>(
    `INSERT INTO radacct (${columns.join(', ')}) VALUES (${columns.map((_, i) => `$${i + 1}`).join(', ')})
     RETURNING radacctid::text AS radacctid`,
    columns.map((column) => full[column]),
  );
  return rows[0].radacctid;
}

/** Updates one radacct row as FreeRADIUS does on an Interim-Update or a Stop. */
export async function updateRadacct(
  t: TestApp,
  radacctId: string,
  changes: Partial<Omit<RadacctRow, 'acctsessionid' | 'username'>>,
): Promise<void> {
  const columns = RADACCT_COLUMNS.filter(
    (column) => (changes as Record<string, unknown>)[column] !== undefined,
  );
  await t.dataSource.query(
    `UPDATE radacct SET ${columns.map((column, i) => `${column} = $${i + 2}`).join(', ')}
      WHERE radacctid = $1`,
    [radacctId, ...columns.map((column) => (changes as Record<string, unknown>)[column])],
  );
}

export function listSessions(
  t: TestApp,
  token: string,
  serviceId: string,
  query: Record<string, string> = {},
) {
  return request(t.http).get(`/api/v1/services/${serviceId}/sessions`).query(query).set(bearer(token));
}

export function getUsage(t: TestApp, token: string, serviceId: string, query: Record<string, string> = {}) {
  return request(t.http).get(`/api/v1/services/${serviceId}/usage`).query(query).set(bearer(token));
}

/** `day` (YYYY-MM-DD) moved by `n` UTC days: the app's own day arithmetic. */
export { addDays };

/** Every day of [from, to]. */
export function daysOf(from: string, to: string): string[] {
  const days: string[] = [];
  for (let day = from; day <= to; day = addDays(day, 1)) {
    days.push(day);
  }
  return days;
}

/** `at` cut to its whole second, as FreeRADIUS records times (ISO). */
export function wholeSecond(at: string | Date): string {
  return new Date(Math.floor(new Date(at).getTime() / 1000) * 1000).toISOString();
}

/** Resolves once the system clock is in a later second than `at` (at most a second). */
export async function untilSecondAfter(at: string | Date): Promise<void> {
  const next = new Date(wholeSecond(at)).getTime() + 1000;
  while (Date.now() < next) {
    await new Promise((resolve) => setTimeout(resolve, next - Date.now()));
  }
}
