import type { Response } from 'supertest';

const GENERATED_REQUEST_ID = /^req_[0-9A-HJKMNP-TV-Z]{26}$/;

export function isGeneratedRequestId(value: unknown): boolean {
  return typeof value === 'string' && GENERATED_REQUEST_ID.test(value);
}

/** The meta every envelope carries, and the X-Request-ID header that must agree with it. */
function expectMeta(res: Response): void {
  expect(typeof res.body.meta?.request_id).toBe('string');
  expect(res.body.meta.request_id.length).toBeGreaterThan(0);
  expect(res.body.meta.api_version).toBe('v1');
  expect(res.headers['x-request-id']).toBe(res.body.meta.request_id);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
}

/** A success envelope (README, "Conventions every endpoint keeps") around one record: exactly success, data and meta{request_id, api_version}. */
export function expectSuccess(res: Response, status = 200): void {
  expect(res.status).toBe(status);
  expect(Object.keys(res.body).sort()).toEqual(['data', 'meta', 'success']);
  expect(res.body.success).toBe(true);
  expect(Object.keys(res.body.meta).sort()).toEqual(['api_version', 'request_id']);
  expectMeta(res);
}

/** The record of a success envelope (`status`, 200 by default), once expectSuccess has passed. */
export function successData<T>(res: Response, status = 200): T {
  expectSuccess(res, status);
  return res.body.data as T;
}

/** The record of a success envelope (`status`) whose fields are exactly `keys` (sorted), once both are checked. */
export function successRecord<T = Record<string, unknown>>(res: Response, keys: string[], status = 200): T {
  const record = successData<T & object>(res, status);
  expect(Object.keys(record).sort()).toEqual(keys);
  return record;
}

/** A success envelope around a list: data is an array and meta.pagination is {limit, has_more, next_cursor}. */
export function expectList(res: Response): void {
  expect(res.status).toBe(200);
  expect(Object.keys(res.body).sort()).toEqual(['data', 'meta', 'success']);
  expect(res.body.success).toBe(true);
  expect(Array.isArray(res.body.data)).toBe(true);
  expect(Object.keys(res.body.meta).sort()).toEqual(['api_version', 'pagination', 'request_id']);
  expect(Object.keys(res.body.meta.pagination).sort()).toEqual(['has_more', 'limit', 'next_cursor']);
  expectMeta(res);
}

/** The ids of the records of a list answer, in its order, once expectList has passed. */
export function listedIds(res: Response): string[] {
  expectList(res);
  return (res.body.data as { id: string }[]).map((row) => row.id);
}

/** The codes whose answers carry error.details (docs/decisions.md). */
export const VALIDATION_CODES = ['missing_field', 'unknown_field', 'validation_failed', 'invalid_query'];

/**
 * A failure envelope (README, "Conventions every endpoint keeps"): exactly success:false, error{code, message, field} and meta; error.details too (each
 * {code, message, field}, the first being error's own) when the code is a validation one.
 */
export function expectError(res: Response, status: number, code: string, field: string | null = null): void {
  expect({ status: res.status, code: res.body?.error?.code, field: res.body?.error?.field }).toEqual({
    status,
    code,
    field,
  });
  expect(Object.keys(res.body).sort()).toEqual(['error', 'meta', 'success']);
  expect(res.body.success).toBe(false);
  const { details, ...error } = res.body.error;
  expect(Object.keys(error).sort()).toEqual(['code', 'field', 'message']);
  expect(typeof res.body.error.message).toBe('string');
  expect(res.body.error.message.length).toBeGreaterThan(0);
  // A validation failure lists every failure in details, its own first; other failures carry none.
  if (VALIDATION_CODES.includes(code)) {
    expect(Array.isArray(details)).toBe(true);
    expect(details[0]).toEqual(error);
    for (const detail of details) {
      expect(Object.keys(detail).sort()).toEqual(['code', 'field', 'message']);
    }
  } else {
    expect(details).toBeUndefined();
  }
  expectMeta(res);
}

/** A 404 not_found: what a record of another tenant, or one that does not exist, answers. */
export function expectNotFound(res: Response): void {
  expectError(res, 404, 'not_found');
}

/**
 * An idempotent replay of `first`: the same status and body, marked Idempotent-Replayed, carrying its own request id
 * (in X-Request-ID and meta, which agree) and the first request's in Original-Request-ID.
 */
export function expectReplayOf(replay: Response, first: Response): void {
  expectSuccess(replay, first.status);
  expect(replay.headers['idempotent-replayed']).toBe('true');
  expect(replay.headers['original-request-id']).toBe(first.body.meta.request_id);
  expect(replay.body).toEqual({
    ...first.body,
    meta: { ...first.body.meta, request_id: replay.headers['x-request-id'] },
  });
}
