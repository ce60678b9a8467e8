import request, { type Response } from 'supertest';
import { expectError, expectList } from './envelope';
import { bearer, sendJsonText } from './factories';
import { reach, type ApiTarget } from './test-app';

/**
 * Test cases more than one suite runs on its own endpoints. Each takes the suite's app as a function, since the app
 * is started in a beforeAll, after the tests are declared.
 */

export type Method = 'get' | 'post' | 'patch' | 'put' | 'delete';

/**
 * `it('should require authentication')`: `method path` with `body` and no token answers 401
 * authentication_required. The path and the body may be functions, called in the test, when they name the suite's
 * fixtures.
 */
export function itRequiresAuthentication(
  app: () => ApiTarget,
  method: Method,
  path: string | (() => string),
  body?: object | (() => object),
): void {
  it('should require authentication', async () => {
    const call = request(reach(app()).to)[method](typeof path === 'function' ? path() : path);
    const sent = typeof body === 'function' ? body() : body;
    expectError(await (sent === undefined ? call : call.send(sent)), 401, 'authentication_required');
  });
}

/**
 * `it.each('should answer 400 invalid_json for %s')`: `method path` with `token()` and each JSON text of `texts` (by
 * what it is) as the body answers 400 invalid_json. The path may be a function, called in the test.
 */
export function itAnswersInvalidJson(
  app: () => ApiTarget,
  token: () => string,
  method: Exclude<Method, 'delete'>,
  path: string | (() => string | Promise<string>),
  texts: Record<string, string>,
): void {
  it.each(Object.entries(texts))('should answer 400 invalid_json for %s', async (_what, text) => {
    const to = typeof path === 'function' ? await path() : path;
    expectError(await sendJsonText(reach(app()).to, method, to, token(), text), 400, 'invalid_json');
  });
}

/**
 * The refusals of a list's query string: `it.each` 400 invalid_query naming the parameter for each [name, value] of
 * `cases`, and 400 invalid_cursor for a starting_after the API did not issue (`badCursor`).
 */
export function itRefusesBadListQueries(
  app: () => ApiTarget,
  token: () => string,
  path: string,
  cases: [string, string][],
  badCursor = 'nonsense',
): void {
  const list = (query: Record<string, string>) =>
    request(reach(app()).to).get(path).query(query).set(bearer(token()));
  it.each(cases)('should answer 400 invalid_query for %s=%s', async (name, value) => {
    expectError(await list({ [name]: value }), 400, 'invalid_query', name);
  });
  it('should answer 400 invalid_cursor for a cursor it did not issue', async () => {
    expectError(await list({ starting_after: badCursor }), 400, 'invalid_cursor', 'starting_after');
  });
}

/**
 * Walks a list `limit` rows a page, by starting_after, checking each page: its envelope, at most `limit` rows,
 * `limit` echoed, and a next_cursor exactly while has_more. Answers the ids in the order seen and the pages walked.
 */
export async function walkPages(
  target: ApiTarget,
  token: string,
  path: string,
  limit: number,
): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const res: Response = await request(reach(target).to)
      .get(path)
      .query({ limit: String(limit), ...(cursor ? { starting_after: cursor } : {}) })
      .set(bearer(token));
    expectList(res);
    const { has_more, next_cursor, limit: echoed } = res.body.meta.pagination;
    expect(res.body.data.length).toBeLessThanOrEqual(limit);
    expect(echoed).toBe(limit);
    expect(typeof next_cursor).toBe(has_more ? 'string' : 'object');
    ids.push(...(res.body.data as { id: string }[]).map((row) => row.id));
    cursor = has_more ? (next_cursor as string) : null;
    pages += 1;
  } while (cursor);
  return { ids, pages };
}
