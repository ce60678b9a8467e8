/**
 * Small HTTP and SQL helpers for the several-instances spec: every request goes to a running instance by its base
 * address (`request(url)`), every SQL read to the shared database with a plain `pg` client.
 */
import request, { type Response } from 'supertest';
import { bearer } from '../../support/factories';
import { BOOTSTRAP_TOKEN } from '../../support/test-app';
import { recordSecrets } from './log-capture';

export type Body = Record<string, unknown>;

export interface Tenant {
  id: string;
  slug: string;
  token: string;
}

/** Throws with the answer unless it has `status`: a setup step that went wrong says what it got. */
export function ensure(res: Response, status: number, what: string): Response {
  if (res.status !== status) {
    throw new Error(`${what}: expected ${status}, got ${res.status} ${JSON.stringify(res.body)}`);
  }
  return res;
}

/** Tenant `slug` and a token of it with `scopes`, through the bootstrap token on `url`; the raw token is recorded. */
export async function createTenant(url: string, slug: string, scopes: string[] = ['admin']): Promise<Tenant> {
  const tenant = ensure(
    await request(url)
      .post('/api/v1/tenants')
      .set(bearer(BOOTSTRAP_TOKEN))
      .send({ slug, name: `Tenant ${slug}` }),
    201,
    'create tenant',
  );
  const issued = ensure(
    await request(url)
      .post('/api/v1/tokens')
      .set(bearer(BOOTSTRAP_TOKEN))
      .send({ tenant: slug, name: 'several instances', scopes }),
    201,
    'issue token',
  );
  const token = issued.body.data.token as string;
  recordSecrets(token);
  return { id: tenant.body.data.id as string, slug, token };
}

export function post(
  url: string,
  token: string,
  path: string,
  body: Body,
  headers: Record<string, string> = {},
) {
  return request(url).post(path).set(bearer(token)).set(headers).send(body);
}

/**
 * `count` POSTs, `parallel` at a time, request i to urls[i % urls.length]; each must answer `status`. Answers the
 * `data` of each, in order.
 */
export async function postMany(
  urls: string[],
  token: string,
  count: number,
  parallel: number,
  make: (i: number) => { path: string; body: Body },
  status: number,
): Promise<Body[]> {
  const out: Body[] = [];
  for (let start = 0; start < count; start += parallel) {
    const batch = Array.from({ length: Math.min(parallel, count - start) }, (_, k) => start + k);
    const answers = await Promise.all(
      batch.map(async (i) => {
        const { path, body } = make(i);
        return ensure(await post(urls[i % urls.length], token, path, body), status, `POST ${path}`);
      }),
    );
    out.push(...answers.map((res) => res.body.data as Body));
  }
  return out;
}

/** How many times each value occurs. */
export function tally(values: (string | number)[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const value of values) {
    counts[value] = (counts[value] ?? 0) + 1;
  }
  return counts;
}

/** The values that occur more than once, with their counts: `{}` when none repeats. */
export function repeats(values: (string | number)[]): Record<string, number> {
  return Object.fromEntries(Object.entries(tally(values)).filter(([, n]) => n > 1));
}
