import request from 'supertest';
import { expectError, expectList, expectNotFound, successRecord } from '../support/envelope';
import { bearer } from '../support/factories';
import {
  getImport,
  IMPORT_ERROR_KEYS,
  IMPORT_ID,
  IMPORT_KEYS,
  importAndWait,
  importErrors,
  type ImportJob,
  postImport,
  toCsv,
  waitForImport,
} from '../support/import-factory';
import {
  createBillingProfile,
  type EventBody,
  listEvents,
  uniqueEmail,
  uniqueRef,
} from '../support/subscriber-factory';
import { createTenantWithToken, startTestApp, type TenantWithToken, type TestApp } from '../support/test-app';

const HEADER = [
  'external_id',
  'full_name',
  'email',
  'phone',
  'status',
  'address.line1',
  'address.city',
  'metadata.plan',
  'tax_exempt',
  'tax_exempt_reason',
];

interface Subscriber {
  id: string;
  external_id: string | null;
  full_name: string;
  email: string | null;
  phone: string | null;
  status: string;
  address: Record<string, string | null> | null;
  metadata: Record<string, unknown>;
  tax_exempt: boolean;
  tax_exempt_reason: string | null;
}

/** Issue #32 item 2: POST /imports of subscribers (CSV, JSON Lines, multipart), the job, its errors, dry runs. */
describe('Imports: subscribers', () => {
  let t: TestApp;
  let owner: TenantWithToken;

  beforeAll(async () => {
    t = await startTestApp({ IMPORT_POLL_MS: '50', IMPORT_BATCH_SIZE: '50' });
    owner = await createTenantWithToken(t, [
      'subscribers:read',
      'subscribers:write',
      'events:read',
      'billing:write',
    ]);
  });
  afterAll(() => t.close());

  async function subscriberByRef(externalId: string, token = owner.token): Promise<Subscriber | undefined> {
    const res = await request(t.http)
      .get('/api/v1/subscribers')
      .query({ external_id: externalId })
      .set(bearer(token));
    expectList(res);
    expect(res.body.data.length).toBeLessThanOrEqual(1);
    return res.body.data[0] as Subscriber | undefined;
  }

  it('imports a CSV: each row a subscriber as POST /subscribers makes it, with its subscriber.created event', async () => {
    const refs = [uniqueRef(), uniqueRef(), uniqueRef()];
    const email = uniqueEmail();
    const csv = toCsv(HEADER, [
      [
        refs[0],
        'Ada Lovelace',
        email,
        '+14155550123',
        'active',
        '12 Fibre Lane',
        'London',
        'fiber-500',
        null,
        null,
      ],
      [
        refs[1],
        'Lovelace, "Countess"',
        null,
        null,
        'prospect',
        'Flat 2\nHigh Street',
        null,
        null,
        'true',
        'Charity',
      ],
      [refs[2], 'Charles Babbage', null, null, 'pending', null, null, null, 'false', null],
    ]);
    const res = await postImport(t, owner.token, csv);
    const queued = successRecord<ImportJob>(res, IMPORT_KEYS, 202);
    expect(queued).toMatchObject({ kind: 'subscribers', format: 'csv', dry_run: false, rows_total: 3 });
    expect(queued.id).toMatch(IMPORT_ID);
    expect(['queued', 'running', 'completed']).toContain(queued.status);
    const job = await waitForImport(t, owner.token, queued.id);
    expect(job).toMatchObject({
      status: 'completed',
      rows_total: 3,
      rows_done: 3,
      created: 3,
      updated: 0,
      failed: 0,
    });
    expect(job.completed_at).not.toBeNull();

    const ada = (await subscriberByRef(refs[0]))!;
    expect(ada).toMatchObject({
      full_name: 'Ada Lovelace',
      email,
      phone: '+14155550123',
      status: 'active',
      address: { line1: '12 Fibre Lane', city: 'London' },
      metadata: { plan: 'fiber-500' },
      tax_exempt: false,
    });
    expect(await subscriberByRef(refs[1])).toMatchObject({
      full_name: 'Lovelace, "Countess"',
      address: { line1: 'Flat 2\nHigh Street' },
      tax_exempt: true,
      tax_exempt_reason: 'Charity',
    });
    const created = await listEvents(t, owner.token, { type: 'subscriber.created', subject_id: ada.id });
    expect(created).toHaveLength(1);
    expect(created[0].data.object).toMatchObject({ id: ada.id, external_id: refs[0] });
    const completed: EventBody[] = await listEvents(t, owner.token, {
      type: 'import.completed',
      subject_id: job.id,
    });
    expect(completed).toHaveLength(1);
    expect(completed[0].data.object).toMatchObject({ id: job.id, status: 'completed', created: 3 });
  });

  it('is idempotent by external_id: the same file again creates nothing, a changed row updates its subscriber', async () => {
    const refs = [uniqueRef(), uniqueRef()];
    const rows = [
      [refs[0], 'Grace Hopper', null, null, 'active', null, 'Arlington', null, null, null],
      [refs[1], 'Alan Turing', null, null, 'active', null, null, 'fiber-100', null, null],
    ];
    expect(await importAndWait(t, owner.token, toCsv(HEADER, rows))).toMatchObject({ created: 2, failed: 0 });
    expect(await importAndWait(t, owner.token, toCsv(HEADER, rows))).toMatchObject({
      created: 0,
      updated: 0,
      unchanged: 2,
      failed: 0,
    });
    rows[1][1] = 'Alan M. Turing';
    expect(await importAndWait(t, owner.token, toCsv(HEADER, rows))).toMatchObject({
      created: 0,
      updated: 1,
      unchanged: 1,
    });
    const alan = (await subscriberByRef(refs[1]))!;
    expect(alan.full_name).toBe('Alan M. Turing');
    const updated = await listEvents(t, owner.token, { type: 'subscriber.updated', subject_id: alan.id });
    expect(updated.map((event) => event.data.changed_fields)).toEqual([['full_name']]);
  });

  it('takes JSON Lines and multipart/form-data uploads', async () => {
    const [a, b] = [uniqueRef(), uniqueRef()];
    const lines = [
      JSON.stringify({ external_id: a, full_name: 'Jsonl One', status: 'prospect', metadata: { floor: 3 } }),
      '',
      JSON.stringify({ external_id: b, full_name: 'Jsonl Two', status: 'active' }),
    ].join('\r\n');
    const jsonl = await importAndWait(t, owner.token, lines, 'application/x-ndjson');
    expect(jsonl).toMatchObject({ format: 'jsonl', rows_total: 2, created: 2 });
    expect(await subscriberByRef(a)).toMatchObject({ full_name: 'Jsonl One', metadata: { floor: 3 } });

    const c = uniqueRef();
    const res = await request(t.http)
      .post('/api/v1/imports')
      .set(bearer(owner.token))
      .field('kind', 'subscribers')
      .field('dry_run', 'false')
      .attach(
        'file',
        Buffer.from(toCsv(['external_id', 'full_name', 'status'], [[c, 'Multi Part', 'active']])),
        {
          filename: 'subscribers.csv',
          contentType: 'application/octet-stream',
        },
      );
    const job = successRecord<ImportJob>(res, IMPORT_KEYS, 202);
    expect(job.format).toBe('csv');
    expect(await waitForImport(t, owner.token, job.id)).toMatchObject({ status: 'completed', created: 1 });
    expect(await subscriberByRef(c)).toMatchObject({ full_name: 'Multi Part' });
  });

  it('lists each refused row with its number, field and the code POST /subscribers would answer', async () => {
    const taken = uniqueEmail();
    const profile = await createBillingProfile(t, owner.token);
    const refs = Array.from({ length: 8 }, () => uniqueRef());
    const csv = toCsv(
      ['external_id', 'full_name', 'email', 'status', 'billing_profile_id', 'tax_exempt'],
      [
        [refs[0], 'Good Row', taken, 'active', null, null],
        [refs[1], 'Bad Email', 'not-an-email', 'active', null, null],
        [refs[2], null, null, 'active', null, null],
        [null, 'No Ref', null, 'active', null, null],
        [refs[3], 'Same Email', taken, 'active', null, null],
        [refs[4], 'No Profile', null, 'active', 'bp_01JD3Z6W3R4T5Y6U7I8O9P0QAB', null],
        [refs[5], 'Bad Status', null, 'archived', null, null],
        [refs[6], 'Exempt Without Reason', null, 'active', null, 'true'],
        [refs[7], 'With Profile', null, 'active', profile.id, 'maybe'],
      ],
    );
    const job = await importAndWait(t, owner.token, csv);
    expect(job).toMatchObject({ status: 'completed', rows_total: 9, created: 1, failed: 8 });
    const errors = await importErrors(t, owner.token, job.id);
    for (const error of errors) {
      expect(Object.keys(error).sort()).toEqual(IMPORT_ERROR_KEYS);
    }
    expect(errors.map(({ row, field, code, external_id }) => ({ row, field, code, external_id }))).toEqual([
      { row: 2, field: 'email', code: 'validation_failed', external_id: refs[1] },
      { row: 3, field: 'full_name', code: 'missing_field', external_id: refs[2] },
      { row: 4, field: 'external_id', code: 'missing_field', external_id: null },
      { row: 5, field: 'email', code: 'duplicate_subscriber', external_id: refs[3] },
      { row: 6, field: 'billing_profile_id', code: 'invalid_reference', external_id: refs[4] },
      { row: 7, field: 'status', code: 'validation_failed', external_id: refs[5] },
      { row: 8, field: 'tax_exempt_reason', code: 'missing_field', external_id: refs[6] },
      { row: 9, field: 'tax_exempt', code: 'validation_failed', external_id: refs[7] },
    ]);
    expect(await subscriberByRef(refs[0])).toBeDefined();
    expect(await subscriberByRef(refs[4])).toBeUndefined();
  });

  it('dry_run validates and counts every row and writes nothing but the job', async () => {
    const known = uniqueRef();
    await importAndWait(
      t,
      owner.token,
      toCsv(['external_id', 'full_name', 'status'], [[known, 'Known', 'active']]),
    );
    const fresh = uniqueRef();
    const csv = toCsv(
      ['external_id', 'full_name', 'status'],
      [
        [known, 'Known Renamed', 'active'],
        [fresh, 'Fresh', 'active'],
        [uniqueRef(), null, 'active'],
      ],
    );
    const job = await importAndWait(t, owner.token, csv, 'text/csv', {
      kind: 'subscribers',
      dry_run: 'true',
    });
    expect(job).toMatchObject({ dry_run: true, created: 1, updated: 1, failed: 1, rows_done: 3 });
    expect(await subscriberByRef(fresh)).toBeUndefined();
    expect((await subscriberByRef(known))!.full_name).toBe('Known');
    expect(await importErrors(t, owner.token, job.id)).toHaveLength(1);
  });

  it('lists imports newest first, and keeps another tenant out of them', async () => {
    const job = await importAndWait(
      t,
      owner.token,
      toCsv(['external_id', 'full_name', 'status'], [[uniqueRef(), 'Listed', 'active']]),
    );
    const res = await request(t.http).get('/api/v1/imports').query({ limit: 2 }).set(bearer(owner.token));
    expectList(res);
    expect(res.body.data[0].id).toBe(job.id);
    const completed = await request(t.http)
      .get('/api/v1/imports')
      .query({ status: 'completed' })
      .set(bearer(owner.token));
    expect(completed.body.data.every((each: ImportJob) => each.status === 'completed')).toBe(true);

    const other = await createTenantWithToken(t, ['subscribers:read', 'subscribers:write']);
    expectNotFound(await request(t.http).get(`/api/v1/imports/${job.id}`).set(bearer(other.token)));
    expectNotFound(await request(t.http).get(`/api/v1/imports/${job.id}/errors`).set(bearer(other.token)));
    const theirs = await request(t.http).get('/api/v1/imports').set(bearer(other.token));
    expect(theirs.body.data).toEqual([]);
    expect((await getImport(t, owner.token, job.id)).id).toBe(job.id);
  });

  it('needs subscribers:write to upload and subscribers:read to read', async () => {
    const reader = await createTenantWithToken(t, ['subscribers:read']);
    const csv = toCsv(['external_id', 'full_name', 'status'], [[uniqueRef(), 'Nope', 'active']]);
    expectError(await postImport(t, reader.token, csv), 403, 'insufficient_scope');
    const writer = await createTenantWithToken(t, ['tickets:read']);
    expectError(
      await request(t.http).get('/api/v1/imports').set(bearer(writer.token)),
      403,
      'insufficient_scope',
    );
  });
});
