import { randomBytes, randomInt } from 'node:crypto';
import request from 'supertest';
import { bearer } from './factories';
import { ensure, reach, type ApiTarget } from './test-app';

type Body = Record<string, unknown>;

export const IP_POOL_ID = /^ipp_[0-9A-Z]{26}$/;

/** The fields of an IpPoolDto, in key order. */
export const IP_POOL_FIELDS = [
  'cidr',
  'cooldown_s',
  'created_at',
  'delegated_prefix_length',
  'excluded',
  'family',
  'gateway',
  'id',
  'kind',
  'name',
  'nas_id',
  'updated_at',
  'utilisation',
];

export interface IpPool {
  id: string;
  name: string;
  family: 4 | 6;
  cidr: string;
  gateway: string | null;
  excluded: string[];
  kind: 'static' | 'dynamic';
  delegated_prefix_length: number | null;
  nas_id: string | null;
  cooldown_s: number;
  utilisation: { size: number; allocated: number; cooling: number; free: number };
  created_at: string;
  updated_at: string;
}

/** A pool name no other test uses. */
export function uniquePoolName(prefix = 'pool'): string {
  return `${prefix}-${randomBytes(4).toString('hex')}`;
}

/**
 * An IPv4 /`length` network of 10.0.0.0/8 picked at random: pools of one tenant never overlap, and suites' tenants
 * are fresh, so a clash is only a second pool of the same test (which picks with `distinctFrom`).
 */
export function randomIpv4Network(length = 24): string {
  const size = 2 ** (32 - length);
  const base = (10 << 24) + randomInt(0, 2 ** (24 - (32 - length))) * size;
  return `${[24, 16, 8, 0].map((shift) => (base >>> shift) & 255).join('.')}/${length}`;
}

/** The address `offset` after the network's first (offset 0 is the network address). */
export function addressIn(cidr: string, offset: number): string {
  const [base] = cidr.split('/');
  const value = base.split('.').reduce((sum, octet) => sum * 256 + Number(octet), 0) + offset;
  return [24, 16, 8, 0].map((shift) => Math.floor(value / 2 ** shift) % 256).join('.');
}

export function postPool(t: ApiTarget, token: string, body: Body) {
  return request(reach(t).to).post('/api/v1/ip-pools').set(bearer(token)).send(body);
}

export function patchPool(t: ApiTarget, token: string, id: string, body: Body) {
  return request(reach(t).to).patch(`/api/v1/ip-pools/${id}`).set(bearer(token)).send(body);
}

export function getPoolRes(t: ApiTarget, token: string, id: string) {
  return request(reach(t).to).get(`/api/v1/ip-pools/${id}`).set(bearer(token));
}

export function deletePool(t: ApiTarget, token: string, id: string) {
  return request(reach(t).to).delete(`/api/v1/ip-pools/${id}`).set(bearer(token));
}

/** A static IPv4 /24 of 10/8 (no gateway, nothing excluded, no cooldown) with `overrides` applied. */
export async function createPool(t: ApiTarget, token: string, overrides: Body = {}): Promise<IpPool> {
  const res = await postPool(t, token, {
    name: uniquePoolName(),
    cidr: randomIpv4Network(),
    kind: 'static',
    cooldown_s: 0,
    ...overrides,
  });
  return ensure(res, 201, 'create IP pool').body.data as IpPool;
}

export async function getPool(t: ApiTarget, token: string, id: string): Promise<IpPool> {
  return ensure(await getPoolRes(t, token, id), 200, 'get IP pool').body.data as IpPool;
}
