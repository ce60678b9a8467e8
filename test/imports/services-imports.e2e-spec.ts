import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import request from 'supertest';
import { expectError, expectList } from '../support/envelope';
import { bearer } from '../support/factories';
import {
  getImport,
  importAndWait,
  importErrors,
  type ImportJob,
  postImport,
  toCsv,
} from '../support/import-factory';
import {
  createPlan,
  listOrders,
  type Service,
  uniquePppoeUsername,
  waitForOrder,
} from '../support/provisioning-factory';
import { createSubscriber, type EventBody, listEvents, uniqueRef } from '../support/subscriber-factory';
import { createTenantWithToken, startTestApp, type TenantWithToken, type TestApp } from '../support/test-app';

const HEADER = [
  'external_id',
  'subscriber_external_id',
  'plan_id',
  'plan_name',
  'pppoe_username',
  'pppoe_password',
  'static_ipv4',
  'cpe_mac',
  'installation_address',
];
const SERVICES = { kind: 'services' };

/** A password no other test uses, long enough to be sought in any answer, event or log line. */
function uniquePassword(): string {
  return `pw-${randomBytes(8).toString('hex')}`;
}

/** Collects the JSON log lines the app writes. */
class LogCapture extends Writable {
  readonly raw: string[] = [];

  override _write(chunk: Buffer, _encoding: string, done: () => void): void {
    this.raw.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    done();
  }
}

/** Issue #32 item 2: POST /imports?kind=services, matched by the service's external_id, through provisioning. */
describe('Imports: services', () => {
  let t: TestApp;
  let owner: TenantWithToken;
  const logs = new LogCapture();

  beforeAll(async () => {
    t = await startTestApp(
      { IMPORT_POLL_MS: '50', IMPORT_BATCH_SIZE: '3', LOG_LEVEL: 'debug' },
      { logDestination: logs },
    );
    owner = await createTenantWithToken(t, ['subscribers:*', 'provisioning:*', 'events:read', 'billing:*']);
  });
  afterAll(() => t.close());

  async function servicesOf(subscriberId: string, token = owner.token): Promise<Service[]> {
    const res = await request(t.http)
      .get(`/api/v1/subscribers/${subscriberId}/services`)
      .query({ limit: 100 })
      .set(bearer(token));
    expectList(res);
    return res.body.data as Service[];
  }

  function row(values: Partial<Record<(typeof HEADER)[number], string>>): (string | null)[] {
    return HEADER.map((name) => values[name] ?? null);
  }

  it('creates each row as POST /subscribers/{id}/services does: the service, its activate order, its events', async () => {
    const plan = await createPlan(t, owner.token);
    const named = await createPlan(t, owner.token);
    const ada = await createSubscriber(t, owner.token);
    const bob = await createSubscriber(t, owner.token, { status: 'active' });
    const refs = [uniqueRef('svc'), uniqueRef('svc')];
    const users = [uniquePppoeUsername(), uniquePppoeUsername()];
    const csv = toCsv(HEADER, [
      row({
        external_id: refs[0],
        subscriber_external_id: ada.external_id!,
        plan_id: plan.id,
        pppoe_username: users[0],
        pppoe_password: uniquePassword(),
        static_ipv4: '203.0.113.77',
        cpe_mac: 'AA-BB-CC-00-11-22',
        installation_address: '12 Fibre Lane',
      }),
      row({
        external_id: refs[1],
        subscriber_external_id: bob.external_id!,
        plan_name: named.name,
        pppoe_username: users[1],
        pppoe_password: uniquePassword(),
      }),
    ]);
    const job = await importAndWait(t, owner.token, csv, 'text/csv', SERVICES);
    expect(job).toMatchObject({
      kind: 'services',
      status: 'completed',
      rows_total: 2,
      created: 2,
      failed: 0,
    });

    const [first] = await servicesOf(ada.id);
    expect(first).toMatchObject({
      external_id: refs[0],
      plan_id: plan.id,
      pppoe_username: users[0],
      static_ipv4: '203.0.113.77',
      cpe_mac: 'aa:bb:cc:00:11:22',
      installation_address: '12 Fibre Lane',
    });
    const [second] = await servicesOf(bob.id);
    expect(second).toMatchObject({ external_id: refs[1], plan_id: named.id, pppoe_username: users[1] });
    for (const service of [first, second]) {
      const orders = await listOrders(t, owner.token, { service_id: service.id });
      expect(orders.map((order) => order.action)).toEqual(['activate']);
      const events = await listEvents(t, owner.token, { subject_id: service.id, type: 'service.created' });
      expect(events).toHaveLength(1);
      expect(events[0].data.object).toMatchObject({ id: service.id, external_id: service.external_id });
    }
    // As for an API create, a prospect's first service moves it on (subscriber_follows_service).
    const res = await request(t.http).get(`/api/v1/subscribers/${ada.id}`).set(bearer(owner.token));
    expect(['pending', 'active']).toContain(res.body.data.status);
  });

  it('is idempotent by external_id: again, nothing is created; a change PATCH allows updates the service', async () => {
    const plan = await createPlan(t, owner.token);
    const subscriber = await createSubscriber(t, owner.token, { status: 'active' });
    const refs = [uniqueRef('svc'), uniqueRef('svc')];
    const users = [uniquePppoeUsername(), uniquePppoeUsername()];
    const passwords = [uniquePassword(), uniquePassword()];
    const rows = (address: string) =>
      toCsv(
        HEADER,
        refs.map((ref, index) =>
          row({
            external_id: ref,
            subscriber_external_id: subscriber.external_id!,
            plan_id: plan.id,
            pppoe_username: users[index],
            pppoe_password: passwords[index],
            installation_address: index === 0 ? address : 'Unchanged Road 1',
          }),
        ),
      );
    const first = await importAndWait(t, owner.token, rows('Old Street 1'), 'text/csv', SERVICES);
    expect(first).toMatchObject({ created: 2, updated: 0, unchanged: 0, failed: 0 });
    const again = await importAndWait(t, owner.token, rows('Old Street 1'), 'text/csv', SERVICES);
    expect(again).toMatchObject({ created: 0, updated: 0, unchanged: 2, failed: 0 });
    const changed = await importAndWait(t, owner.token, rows('New Street 9'), 'text/csv', SERVICES);
    expect(changed).toMatchObject({ created: 0, updated: 1, unchanged: 1, failed: 0 });

    const services = await servicesOf(subscriber.id);
    expect(services).toHaveLength(2);
    const moved = services.find((service) => service.external_id === refs[0])!;
    expect(moved.installation_address).toBe('New Street 9');
    const updated = await listEvents(t, owner.token, { subject_id: moved.id, type: 'service.updated' });
    expect(updated).toHaveLength(1);
    expect(updated[0].data.changed_fields).toEqual(['installation_address']);
    // Not a network change: no modify order, the activate order only.
    expect((await listOrders(t, owner.token, { service_id: moved.id })).map((o) => o.action)).toEqual([
      'activate',
    ]);
  });

  it('dry_run validates and counts every row and writes nothing', async () => {
    const plan = await createPlan(t, owner.token);
    const subscriber = await createSubscriber(t, owner.token);
    const ref = uniqueRef('svc');
    const csv = toCsv(HEADER, [
      row({
        external_id: ref,
        subscriber_external_id: subscriber.external_id!,
        plan_id: plan.id,
        pppoe_username: uniquePppoeUsername(),
        pppoe_password: uniquePassword(),
      }),
      row({
        external_id: uniqueRef('svc'),
        subscriber_external_id: 'nobody-here',
        plan_id: plan.id,
        pppoe_username: uniquePppoeUsername(),
        pppoe_password: uniquePassword(),
      }),
    ]);
    const job = await importAndWait(t, owner.token, csv, 'text/csv', { ...SERVICES, dry_run: 'true' });
    expect(job).toMatchObject({ dry_run: true, status: 'completed', created: 1, failed: 1 });
    expect(await servicesOf(subscriber.id)).toEqual([]);
    expect(await listOrders(t, owner.token, { subscriber_id: subscriber.id })).toEqual([]);
    const res = await request(t.http).get(`/api/v1/subscribers/${subscriber.id}`).set(bearer(owner.token));
    expect(res.body.data.status).toBe('prospect');
    expect((await importErrors(t, owner.token, job.id)).map((e) => [e.row, e.field])).toEqual([
      [2, 'subscriber_external_id'],
    ]);
  });

  it('lists each refused row with its number, field and code; the others are imported', async () => {
    const plan = await createPlan(t, owner.token);
    const inactive = await createPlan(t, owner.token);
    await request(t.http)
      .patch(`/api/v1/service-plans/${inactive.id}`)
      .set(bearer(owner.token))
      .send({ active: false })
      .expect(200);
    const subscriber = await createSubscriber(t, owner.token, { status: 'active' });
    const taken = uniquePppoeUsername();
    const existing = uniqueRef('svc');
    const base = (values: Partial<Record<(typeof HEADER)[number], string>>) =>
      row({
        external_id: uniqueRef('svc'),
        subscriber_external_id: subscriber.external_id!,
        plan_id: plan.id,
        pppoe_username: uniquePppoeUsername(),
        pppoe_password: uniquePassword(),
        ...values,
      });
    await importAndWait(
      t,
      owner.token,
      toCsv(HEADER, [base({ external_id: existing, pppoe_username: taken })]),
      'text/csv',
      SERVICES,
    );
    const other = await createPlan(t, owner.token);
    const csv = toCsv(HEADER, [
      base({ subscriber_external_id: 'crm-unknown' }),
      base({ plan_id: 'plan_01JD3Z6W3R4T5Y6U7I8O9P0QAB' }),
      base({ plan_id: '', plan_name: 'No Such Plan' }),
      base({ plan_name: plan.name }),
      base({ plan_id: '' }),
      base({ plan_id: inactive.id }),
      base({ pppoe_password: 'short' }),
      base({ pppoe_username: 'no spaces' }),
      base({ pppoe_username: taken }),
      base({ external_id: '' }),
      base({ static_ipv4: '127.0.0.1' }),
      base({ external_id: existing, pppoe_username: taken, plan_id: other.id }),
      base({}),
    ]);
    const job = await importAndWait(t, owner.token, csv, 'text/csv', SERVICES);
    expect(job).toMatchObject({ status: 'completed', rows_total: 13, created: 1, failed: 12 });
    const errors = await importErrors(t, owner.token, job.id);
    expect(errors.map(({ row: n, field, code }) => [n, field, code])).toEqual([
      [1, 'subscriber_external_id', 'invalid_reference'],
      [2, 'plan_id', 'invalid_reference'],
      [3, 'plan_name', 'invalid_reference'],
      [4, 'plan_name', 'validation_failed'],
      [5, 'plan_id', 'missing_field'],
      [6, 'plan_id', 'validation_failed'],
      [7, 'pppoe_password', 'validation_failed'],
      [8, 'pppoe_username', 'validation_failed'],
      [9, 'pppoe_username', 'duplicate_service_username'],
      [10, 'external_id', 'missing_field'],
      [11, 'static_ipv4', 'validation_failed'],
      [12, 'plan_id', 'validation_failed'],
    ]);
    expect(errors[11].external_id).toBe(existing);
    expect(await servicesOf(subscriber.id)).toHaveLength(2);
  });

  it('never shows a password: not in the job, its refused rows, an event or a log line', async () => {
    const plan = await createPlan(t, owner.token);
    const subscriber = await createSubscriber(t, owner.token, { status: 'active' });
    const passwords = [uniquePassword(), uniquePassword(), uniquePassword(), uniquePassword()];
    const ref = uniqueRef('svc');
    const username = uniquePppoeUsername();
    const logStart = logs.raw.length;
    const jsonl = [
      { external_id: ref, pppoe_password: passwords[0], plan_id: plan.id, pppoe_username: username },
      // Refused: an unknown plan, and a password with a character no PPPoE client sends.
      { external_id: uniqueRef('svc'), pppoe_password: passwords[1], plan_id: 'plan_nope' },
      { external_id: uniqueRef('svc'), pppoe_password: `${passwords[2]}\u00e9`, plan_id: plan.id },
    ]
      .map((body) =>
        JSON.stringify({
          subscriber_external_id: subscriber.external_id,
          pppoe_username: uniquePppoeUsername(),
          ...body,
        }),
      )
      .join('\n');
    const job = await importAndWait(t, owner.token, jsonl, 'application/x-ndjson', SERVICES);
    expect(job).toMatchObject({ created: 1, failed: 2 });
    // A changed password updates the service, through a modify order once the activate order is done.
    const [service] = await servicesOf(subscriber.id);
    const [activate] = await listOrders(t, owner.token, { service_id: service.id });
    await waitForOrder(t, owner.token, activate.id, ['completed']);
    const changed = JSON.stringify({
      external_id: ref,
      subscriber_external_id: subscriber.external_id,
      plan_id: plan.id,
      pppoe_username: username,
      pppoe_password: passwords[3],
    });
    const update = await importAndWait(t, owner.token, changed, 'application/x-ndjson', SERVICES);
    expect(update).toMatchObject({ updated: 1, failed: 0 });
    const orders = await listOrders(t, owner.token, { service_id: service.id });
    expect(orders.map((order) => [order.action, order.changes])).toEqual([
      ['modify', ['pppoe_password']],
      ['activate', null],
    ]);
    const seen = [
      JSON.stringify(await getImport(t, owner.token, job.id)),
      JSON.stringify(await importErrors(t, owner.token, job.id)),
      JSON.stringify(await getImport(t, owner.token, update.id)),
      JSON.stringify(orders),
      JSON.stringify(await listEvents(t, owner.token, {})),
      JSON.stringify((await request(t.http).get('/api/v1/imports').set(bearer(owner.token))).body),
      JSON.stringify(await servicesOf(subscriber.id)),
      ...logs.raw.slice(logStart),
    ].join('\n');
    expect(logs.raw.length).toBeGreaterThan(logStart);
    for (const password of passwords) {
      expect(seen).not.toContain(password);
    }
    // The uploaded rows are gone with the batches that did them.
    const left: unknown[] = await t.dataSource.query('SELECT 1 FROM import_rows WHERE import_id = $1', [
      job.id,
    ]);
    expect(left).toEqual([]);
  });

  it("keeps tenants apart: another tenant's subscriber or plan is not found", async () => {
    const other = await createTenantWithToken(t, ['subscribers:*', 'provisioning:*', 'events:read']);
    const plan = await createPlan(t, owner.token);
    const theirPlan = await createPlan(t, other.token);
    const mine = await createSubscriber(t, owner.token);
    const theirs = await createSubscriber(t, other.token);
    const csv = toCsv(HEADER, [
      row({
        external_id: uniqueRef('svc'),
        subscriber_external_id: theirs.external_id!,
        plan_id: plan.id,
        pppoe_username: uniquePppoeUsername(),
        pppoe_password: uniquePassword(),
      }),
      row({
        external_id: uniqueRef('svc'),
        subscriber_external_id: mine.external_id!,
        plan_name: theirPlan.name,
        pppoe_username: uniquePppoeUsername(),
        pppoe_password: uniquePassword(),
      }),
      row({
        external_id: uniqueRef('svc'),
        subscriber_external_id: mine.external_id!,
        plan_id: theirPlan.id,
        pppoe_username: uniquePppoeUsername(),
        pppoe_password: uniquePassword(),
      }),
    ]);
    const job = await importAndWait(t, owner.token, csv, 'text/csv', SERVICES);
    expect(job).toMatchObject({ created: 0, failed: 3 });
    expect((await importErrors(t, owner.token, job.id)).map((e) => [e.row, e.field, e.code])).toEqual([
      [1, 'subscriber_external_id', 'invalid_reference'],
      [2, 'plan_name', 'invalid_reference'],
      [3, 'plan_id', 'invalid_reference'],
    ]);
    expect(await servicesOf(theirs.id, other.token)).toEqual([]);
    const events: EventBody[] = await listEvents(t, other.token, { type: 'service.created' });
    expect(events).toEqual([]);
  });

  it('needs provisioning:write besides subscribers:write to import services', async () => {
    const limited = await createTenantWithToken(t, ['subscribers:write', 'subscribers:read']);
    const csv = toCsv(HEADER, [row({ external_id: 'svc-1', subscriber_external_id: 'crm-1' })]);
    const res = await postImport(t, limited.token, csv, 'text/csv', SERVICES);
    expectError(res, 403, 'insufficient_scope', 'kind');
    const list = await request(t.http).get('/api/v1/imports').set(bearer(limited.token));
    expect((list.body.data as ImportJob[]).length).toBe(0);
  });
});
