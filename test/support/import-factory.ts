import request, { type Response } from 'supertest';
import { bearer } from './factories';
import { type ApiTarget, ensure, reach } from './test-app';
import { waitUntil } from './wait-for';

export const IMPORT_ID = /^imp_[0-9A-Z]{26}$/;
export const IMPORT_KEYS = [
  'completed_at',
  'created',
  'created_at',
  'dry_run',
  'error',
  'failed',
  'format',
  'id',
  'kind',
  'rows_done',
  'rows_total',
  'status',
  'unchanged',
  'updated',
  'updated_at',
];
export const IMPORT_ERROR_KEYS = ['code', 'external_id', 'field', 'message', 'row'];

export interface ImportJob {
  id: string;
  kind: string;
  format: string;
  dry_run: boolean;
  status: 'queued' | 'running' | 'completed' | 'failed';
  rows_total: number;
  rows_done: number;
  created: number;
  updated: number;
  unchanged: number;
  failed: number;
  error: string | null;
  created_at: string;
  updated_at: string;
  completed_at: string | null;
}

export interface ImportRowError {
  row: number;
  external_id: string | null;
  field: string | null;
  code: string;
  message: string;
}

/** Writes rows as RFC 4180 CSV under `header`, quoting every field that needs it. */
export function toCsv(header: string[], rows: (string | number | boolean | null)[][], eol = '\n'): string {
  const cell = (value: string | number | boolean | null) => {
    const text = value === null ? '' : String(value);
    return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
  };
  return [header, ...rows].map((row) => row.map(cell).join(',')).join(eol) + eol;
}

/** POST /imports with the file as the body of `contentType`, options as query parameters. */
export function postImport(
  t: ApiTarget,
  token: string,
  body: string | Buffer,
  contentType = 'text/csv',
  query: Record<string, string> = { kind: 'subscribers' },
): Promise<Response> {
  return request(reach(t).to)
    .post('/api/v1/imports')
    .query(query)
    .set(bearer(token))
    .set('Content-Type', contentType)
    .send(typeof body === 'string' ? Buffer.from(body, 'utf8') : body);
}

export async function getImport(t: ApiTarget, token: string, id: string): Promise<ImportJob> {
  const res = await request(reach(t).to).get(`/api/v1/imports/${id}`).set(bearer(token));
  return ensure(res, 200, `get import ${id}`).body.data as ImportJob;
}

/** Polls the import until it has ended (completed or failed). */
export function waitForImport(t: ApiTarget, token: string, id: string, timeout = 60_000): Promise<ImportJob> {
  return waitUntil(
    () => getImport(t, token, id),
    (job) => job.status === 'completed' || job.status === 'failed',
    { what: `import ${id} to end`, timeout, interval: 50 },
  );
}

/** Uploads and waits for the end: the finished job. */
export async function importAndWait(
  t: ApiTarget,
  token: string,
  body: string | Buffer,
  contentType = 'text/csv',
  query: Record<string, string> = { kind: 'subscribers' },
): Promise<ImportJob> {
  const res = await postImport(t, token, body, contentType, query);
  const job = ensure(res, 202, 'upload an import').body.data as ImportJob;
  return waitForImport(t, token, job.id);
}

/** Every refused row of an import, page after page. */
export async function importErrors(t: ApiTarget, token: string, id: string): Promise<ImportRowError[]> {
  const all: ImportRowError[] = [];
  let cursor: string | null = null;
  do {
    const res: Response = await request(reach(t).to)
      .get(`/api/v1/imports/${id}/errors`)
      .query({ limit: 100, ...(cursor ? { starting_after: cursor } : {}) })
      .set(bearer(token));
    ensure(res, 200, `errors of import ${id}`);
    all.push(...(res.body.data as ImportRowError[]));
    cursor = res.body.meta.pagination.next_cursor as string | null;
  } while (cursor);
  return all;
}
