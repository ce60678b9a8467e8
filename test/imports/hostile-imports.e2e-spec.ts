import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import request from 'supertest';
import { expectError, expectList } from '../support/envelope';
import { bearer } from '../support/factories';
import { importAndWait, importErrors, postImport, toCsv } from '../support/import-factory';
import { uniqueRef } from '../support/subscriber-factory';
import { createTenantWithToken, startTestApp, type TenantWithToken, type TestApp } from '../support/test-app';

const HEADER = ['external_id', 'full_name', 'status'];

/** Issue #32 item 2: uploads built to hurt — sizes, encodings, CSV quirks, thousands of bad rows, column bombs. */
describe('Imports: hostile uploads', () => {
  let t: TestApp;
  let owner: TenantWithToken;

  beforeAll(async () => {
    t = await startTestApp({ IMPORT_POLL_MS: '50' });
    owner = await createTenantWithToken(t, ['subscribers:read', 'subscribers:write']);
  });
  afterAll(() => t.close());

  async function namesOf(refs: string[]): Promise<(string | undefined)[]> {
    const names: (string | undefined)[] = [];
    for (const ref of refs) {
      const res = await request(t.http)
        .get('/api/v1/subscribers')
        .query({ external_id: ref })
        .set(bearer(owner.token));
      expectList(res);
      names.push(res.body.data[0]?.full_name as string | undefined);
    }
    return names;
  }

  /** POSTs `body` as text/csv in chunks, with no Content-Length: the size is known only by reading. */
  async function chunkedUpload(body: Buffer): Promise<{ status: number; body: { error: { code: string } } }> {
    if (!t.http.listening) {
      await new Promise<void>((resolve) => t.http.listen(0, '127.0.0.1', resolve));
    }
    const { port } = t.http.address() as AddressInfo;
    return new Promise((resolve, reject) => {
      const req = httpRequest(
        {
          port,
          host: '127.0.0.1',
          method: 'POST',
          path: '/api/v1/imports?kind=subscribers',
          headers: { ...bearer(owner.token), 'Content-Type': 'text/csv', 'Transfer-Encoding': 'chunked' },
        },
        (res) => {
          const parts: Buffer[] = [];
          res.on('data', (part: Buffer) => parts.push(part));
          res.on('end', () =>
            resolve({ status: res.statusCode!, body: JSON.parse(Buffer.concat(parts).toString('utf8')) }),
          );
        },
      );
      req.on('error', reject);
      Readable.from(
        (function* () {
          for (let at = 0; at < body.length; at += 1 << 20) {
            yield body.subarray(at, at + (1 << 20));
          }
        })(),
      ).pipe(req);
    });
  }

  async function importCount(): Promise<number> {
    const res = await request(t.http).get('/api/v1/imports').query({ limit: 100 }).set(bearer(owner.token));
    return (res.body.data as unknown[]).length;
  }

  it('reads a BOM, CRLF line ends, quoted newlines, commas and doubled quotes', async () => {
    const refs = [uniqueRef(), uniqueRef(), uniqueRef()];
    const csv =
      '\uFEFFexternal_id,full_name,status\r\n' +
      `${refs[0]},"Line one\r\nline two",active\r\n` +
      `"${refs[1]}","Says ""hi"", then leaves",prospect\r\n` +
      `${refs[2]},Plain,pending`;
    const job = await importAndWait(t, owner.token, csv);
    expect(job).toMatchObject({ status: 'completed', rows_total: 3, created: 3, failed: 0 });
    expect(await namesOf(refs)).toEqual(['Line one\r\nline two', 'Says "hi", then leaves', 'Plain']);
  });

  it('refuses a file that is not UTF-8 (Latin-1, UTF-16) and leaves no job behind', async () => {
    const before = await importCount();
    const latin1 = Buffer.from(`external_id,full_name,status\n${uniqueRef()},Zoë Müller,active\n`, 'latin1');
    expectError(await postImport(t, owner.token, latin1), 400, 'invalid_import_file');
    const utf16 = Buffer.from(`\uFEFFexternal_id,full_name,status\n`, 'utf16le');
    expectError(await postImport(t, owner.token, utf16), 400, 'invalid_import_file');
    expectError(
      await postImport(t, owner.token, 'a', 'text/csv; charset=iso-8859-1'),
      415,
      'unsupported_media_type',
    );
    expect(await importCount()).toBe(before);
  });

  it('refuses other media types, a missing or unknown kind, and broken CSV', async () => {
    const csv = toCsv(HEADER, [[uniqueRef(), 'Nope', 'active']]);
    expectError(await postImport(t, owner.token, csv, 'application/json'), 415, 'unsupported_media_type');
    expectError(await postImport(t, owner.token, csv, 'text/csv', {}), 400, 'missing_field', 'kind');
    expectError(
      await postImport(t, owner.token, csv, 'text/csv', { kind: 'invoices' }),
      400,
      'invalid_query',
      'kind',
    );
    expectError(
      await postImport(t, owner.token, 'external_id,full_name\n"open,x\n'),
      400,
      'invalid_import_file',
    );
    expectError(await postImport(t, owner.token, 'external_id,nickname\nx,y\n'), 400, 'invalid_import_file');
    expectError(await postImport(t, owner.token, 'full_name,status\nx,active\n'), 400, 'invalid_import_file');
    expectError(await postImport(t, owner.token, ''), 400, 'invalid_import_file');
  });

  it('refuses a CSV bomb of columns and a field past the limit without reading on', async () => {
    const bomb = `external_id,full_name,status${',metadata.x'.repeat(5)}\n${','.repeat(2_000_000)}\n`;
    const res = await postImport(t, owner.token, bomb);
    expectError(res, 400, 'invalid_import_file');
    expect(res.body.error.message).toMatch(/more than 100 columns/);
    const long = toCsv(HEADER, [[uniqueRef(), 'x'.repeat(10_001), 'active']]);
    expect((await postImport(t, owner.token, long)).body.error.message).toMatch(/longer than 10000/);
  });

  it('refuses more than 50 MB with 413, declared or streamed', async () => {
    const big = Buffer.alloc(50 * 1000 * 1000 + 1, 'a');
    expectError(await postImport(t, owner.token, big), 413, 'payload_too_large');
    // Rows of a long note: the file is refused for its size, not for a field past the limit.
    const row = `x,y,active,${'n'.repeat(9_000)}\n`;
    const rows = Buffer.from(row.repeat(Math.ceil(big.length / row.length)));
    const streamed = await chunkedUpload(
      Buffer.concat([Buffer.from('external_id,full_name,status,metadata.note\n'), rows]),
    );
    expect({ status: streamed.status, code: streamed.body.error.code }).toEqual({
      status: 413,
      code: 'payload_too_large',
    });
  });

  it('imports a 50 MB file, refusing each of its rows past the metadata limit', async () => {
    const header = 'external_id,full_name,status,metadata.note\n';
    const note = 'n'.repeat(9_900);
    const rows: string[] = [];
    let size = header.length;
    for (let i = 0; size < 49_900_000; i++) {
      const row = `big-${i},Big Row,active,${note}\n`;
      rows.push(row);
      size += row.length;
    }
    const job = await importAndWait(t, owner.token, header + rows.join(''));
    expect(job).toMatchObject({
      status: 'completed',
      rows_total: rows.length,
      failed: rows.length,
      created: 0,
    });
    const [first] = await importErrors(t, owner.token, job.id).then((all) => all.slice(0, 1));
    expect(first).toMatchObject({ row: 1, field: 'metadata.note', code: 'validation_failed' });
  }, 300_000);

  it('lists 10,000 bad rows, each with its row, field and code, among good ones', async () => {
    const rows: (string | null)[][] = [];
    for (let i = 0; i < 10_000; i++) {
      rows.push([uniqueRef(), null, 'active']);
    }
    const good = uniqueRef();
    rows.splice(5000, 0, [good, 'The Good One', 'active']);
    const job = await importAndWait(t, owner.token, toCsv(HEADER, rows));
    expect(job).toMatchObject({ status: 'completed', rows_total: 10_001, created: 1, failed: 10_000 });
    const errors = await importErrors(t, owner.token, job.id);
    expect(errors).toHaveLength(10_000);
    expect(errors.every(({ field, code }) => field === 'full_name' && code === 'missing_field')).toBe(true);
    expect(errors.map(({ row }) => row)).toEqual([
      ...Array.from({ length: 5000 }, (_, i) => i + 1),
      ...Array.from({ length: 5000 }, (_, i) => i + 5002),
    ]);
    expect(await namesOf([good])).toEqual(['The Good One']);
  }, 300_000);

  it('refuses JSON Lines lines that are not objects, row by row, and NUL text', async () => {
    const ok = uniqueRef();
    const lines = [
      JSON.stringify({ external_id: ok, full_name: 'Fine', status: 'active' }),
      '{"external_id": "broken"',
      '[1, 2]',
      JSON.stringify({ external_id: uniqueRef(), full_name: 'Nul\u0000Name', status: 'active' }),
      JSON.stringify({ external_id: uniqueRef(), full_name: 'Extra', status: 'active', shoe_size: 44 }),
    ].join('\n');
    const job = await importAndWait(t, owner.token, lines, 'application/jsonl');
    expect(job).toMatchObject({ rows_total: 5, created: 1, failed: 4 });
    const errors = await importErrors(t, owner.token, job.id);
    expect(errors.map(({ row, code, field }) => ({ row, code, field }))).toEqual([
      { row: 2, code: 'invalid_json', field: null },
      { row: 3, code: 'invalid_json', field: null },
      { row: 4, code: 'validation_failed', field: 'full_name' },
      { row: 5, code: 'unknown_field', field: 'shoe_size' },
    ]);
  });

  it('refuses a multipart upload without its file part, with an unknown field or a field after the file', async () => {
    const post = () => request(t.http).post('/api/v1/imports').set(bearer(owner.token));
    expectError(await post().field('kind', 'subscribers'), 400, 'invalid_import_file', 'file');
    expectError(await post().field('colour', 'blue'), 400, 'unknown_field', 'colour');
    const file = Buffer.from(toCsv(HEADER, [[uniqueRef(), 'X', 'active']]));
    expectError(
      await post().attach('file', file, { filename: 'x.bin', contentType: 'application/octet-stream' }),
      400,
      'missing_field',
      'kind',
    );
    expectError(
      await post().field('kind', 'subscribers').field('dry_run', 'perhaps').attach('file', file, 'x.csv'),
      422,
      'validation_failed',
      'dry_run',
    );
  });
});
