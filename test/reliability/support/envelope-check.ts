import { ERROR_CATALOG } from '../../../src/common/errors/error-catalog';
import type { RawResponse } from './raw-client';

/**
 * The pass criteria of issue 18 item 1 for one answer, as a list of problems (empty: it passes) rather than a throw,
 * so a run of a thousand requests counts every kind of failure instead of stopping at the first:
 * - never a 5xx;
 * - always the envelope (but a document's 200, application/pdf, and an export's, text/csv): `{success, data|error, meta:{request_id,
 *   api_version}}` (lists add meta.pagination; the README's "Conventions every endpoint keeps"), JSON, with
 *   X-Request-ID equal to meta.request_id;
 * - an error's code is in the catalog, and the status is the catalog's status for that code.
 */
export function envelopeProblems(res: RawResponse): string[] {
  const problems: string[] = [];
  if (res.status >= 500) {
    problems.push(`status ${res.status}`);
  }
  if (res.status < 100) {
    problems.push('no HTTP answer');
    return problems;
  }
  // A document (GET …/pdf, issue 29) answers 200 with the PDF itself; its refusals are envelopes like every other.
  if (
    res.status === 200 &&
    /^application\/pdf/i.test(String(res.headers['content-type'] ?? '')) &&
    res.text.startsWith('%PDF-')
  ) {
    return problems;
  }
  // An export (GET /exports/….csv, issue 32) answers 200 with the CSV itself, whole: a header record, every record
  // ending with CRLF; its refusals are envelopes like every other.
  if (
    res.status === 200 &&
    String(res.headers['content-type'] ?? '') === 'text/csv; charset=utf-8' &&
    /^[a-z0-9_]+(,[a-z0-9_]+)*\r\n/.test(res.text) &&
    res.text.endsWith('\r\n')
  ) {
    return problems;
  }
  if (!/^application\/json/i.test(String(res.headers['content-type'] ?? ''))) {
    problems.push(`content-type ${JSON.stringify(res.headers['content-type'] ?? null)}`);
  }
  let body: unknown;
  try {
    body = JSON.parse(res.text);
  } catch {
    problems.push(`body is not JSON: ${JSON.stringify(res.text.slice(0, 80))}`);
    return problems;
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    problems.push('body is not an object');
    return problems;
  }
  const envelope = body as {
    success?: unknown;
    data?: unknown;
    error?: unknown;
    meta?: Record<string, unknown>;
  };
  const keys = Object.keys(envelope).sort().join(',');
  const meta = envelope.meta;
  if (!meta || typeof meta !== 'object') {
    problems.push('no meta');
  } else {
    if (typeof meta.request_id !== 'string' || meta.request_id.length === 0) {
      problems.push('meta.request_id missing');
    } else if (res.headers['x-request-id'] !== meta.request_id) {
      problems.push('X-Request-ID differs from meta.request_id');
    }
    if (meta.api_version !== 'v1') {
      problems.push(`meta.api_version ${JSON.stringify(meta.api_version)}`);
    }
    const metaKeys = Object.keys(meta).sort().join(',');
    if (metaKeys !== 'api_version,request_id' && metaKeys !== 'api_version,pagination,request_id') {
      problems.push(`meta keys ${metaKeys}`);
    }
  }
  const ok = res.status >= 200 && res.status < 300;
  if (ok) {
    if (keys !== 'data,meta,success' || envelope.success !== true) {
      problems.push(`2xx envelope keys ${keys}, success ${String(envelope.success)}`);
    }
    return problems;
  }
  if (keys !== 'error,meta,success' || envelope.success !== false) {
    problems.push(`error envelope keys ${keys}, success ${String(envelope.success)}`);
    return problems;
  }
  const error = envelope.error as { code?: unknown; message?: unknown; field?: unknown };
  const code = String(error?.code);
  const entry = (ERROR_CATALOG as Record<string, { status: number } | undefined>)[code];
  if (!entry || !Object.prototype.hasOwnProperty.call(ERROR_CATALOG, code)) {
    problems.push(`code ${JSON.stringify(error?.code)} not in the catalog`);
  } else if (entry.status !== res.status) {
    problems.push(`code ${code} answered ${res.status}, catalog says ${entry.status}`);
  }
  if (typeof error?.message !== 'string' || error.message.length === 0) {
    problems.push('error.message missing');
  }
  if (error?.field !== null && typeof error?.field !== 'string') {
    problems.push('error.field neither null nor a string');
  }
  return problems;
}

/** The error code of an answer, or `-` for a success or an answer that is no envelope. */
export function codeOf(res: RawResponse): string {
  try {
    const code = (JSON.parse(res.text) as { error?: { code?: unknown } }).error?.code;
    return typeof code === 'string' ? code : '-';
  } catch {
    return '-';
  }
}
