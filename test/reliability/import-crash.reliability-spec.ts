import {
  importErrors,
  postImport,
  toCsv,
  waitForImport,
  getImport,
  type ImportJob,
} from '../support/import-factory';
import { type ImportServer, killInBatch, startImportServer } from '../support/import-process';
import { queryAt, repeats } from '../support/remote';
import { suiteDatabaseUrl } from '../support/server-process';
import { createPlan } from '../support/provisioning-factory';
import { createSubscriber } from '../support/subscriber-factory';
import { createTenantWithToken, ensure, uniqueSlug } from '../support/test-app';

/**
 * Issue #32 item 2: an import survives the crash of the process carrying it out. The server runs as a child process
 * (preloaded by support/import-process.ts so each import batch is held open inside its transaction), is SIGKILLed in
 * the middle of a batch after some batches committed, and a second process on the same database takes the job up once
 * the dead one's lease (IMPORT_LEASE_MS) runs out, going on at the next batch. Every row ends up imported once: no
 * duplicate subscriber, one subscriber.created each, and the job's figures count each row once.
 */

const ROWS = 200;
const BATCH_SIZE = 10;
const HOLD_MS = 400;
const ENV: Record<string, string> = {
  IMPORT_BATCH_SIZE: String(BATCH_SIZE),
  IMPORT_LEASE_MS: '1000',
  IMPORT_POLL_MS: '50',
  BILLING_SCHEDULER_ENABLED: 'false',
  NETWORK_DRIVER: 'none',
};

describe('An import across a crash of its worker', () => {
  const started: ImportServer[] = [];
  const start = async (holdMs: number) => {
    const server = await startImportServer(suiteDatabaseUrl(), holdMs, ENV);
    started.push(server);
    return server;
  };

  // Each test's servers go with it: a server left running would claim the next test's job before its held one does
  // (every server's import worker polls the same database).
  afterEach(async () => {
    for (const server of started.splice(0)) {
      await server.stop('SIGKILL');
    }
  });

  it('should import every row exactly once after the process is SIGKILLed mid-batch and another takes over', async () => {
    const db = suiteDatabaseUrl();
    const first = await start(HOLD_MS);
    const slug = uniqueSlug('imp');
    const tenant = await createTenantWithToken(first.url, ['subscribers:read', 'subscribers:write'], slug);
    const refs = Array.from({ length: ROWS }, (_, i) => `${slug}-${i + 1}`);
    // One bad row in the batches committed before the kill and one in those after: each refused once.
    const rows = refs.map((ref, i) => [ref, i === 4 || i === 150 ? null : `Subscriber ${i + 1}`, 'active']);
    const res = await postImport(
      first.url,
      tenant.token,
      toCsv(['external_id', 'full_name', 'status'], rows),
    );
    const job = ensure(res, 202, 'upload').body.data as ImportJob;

    // Killed inside the fourth batch: three committed, the fourth's writes rolled back with the process.
    const killedIn = await killInBatch(first, 3);
    expect(killedIn).toEqual([31, 40]);
    await first.exited;
    const [left] = await queryAt<{ rows_done: number; status: string; created: number; failed: number }>(
      db,
      'SELECT rows_done, status, created, failed FROM imports WHERE id = $1',
      [job.id],
    );
    expect(left).toEqual({ rows_done: 30, status: 'running', created: 29, failed: 1 });

    const second = await start(0);
    const done = await waitForImport(second.url, tenant.token, job.id, 60_000);
    expect(done).toMatchObject({
      status: 'completed',
      rows_total: ROWS,
      rows_done: ROWS,
      created: ROWS - 2,
      updated: 0,
      unchanged: 0,
      failed: 2,
    });
    expect(
      (await importErrors(second.url, tenant.token, job.id)).map(({ row, field }) => ({ row, field })),
    ).toEqual([
      { row: 5, field: 'full_name' },
      { row: 151, field: 'full_name' },
    ]);

    const subscribers = await queryAt<{ id: string; external_id: string }>(
      db,
      'SELECT s.id, s.external_id FROM subscribers s JOIN tenants t ON t.id = s.tenant_id WHERE t.slug = $1',
      [slug],
    );
    expect(subscribers).toHaveLength(ROWS - 2);
    expect(repeats(subscribers.map((s) => s.external_id))).toEqual({});
    const created = await queryAt<{ subject_id: string }>(
      db,
      `SELECT e.subject_id FROM events e JOIN tenants t ON t.id = e.tenant_id
        WHERE t.slug = $1 AND e.type = 'subscriber.created'`,
      [slug],
    );
    expect(created).toHaveLength(ROWS - 2);
    expect(repeats(created.map((e) => e.subject_id))).toEqual({});
    const ended = await queryAt<{ type: string }>(
      db,
      `SELECT type FROM events WHERE subject_id = $1 AND type LIKE 'import.%'`,
      [job.id],
    );
    expect(ended).toEqual([{ type: 'import.completed' }]);
    const [{ count }] = await queryAt<{ count: string }>(
      db,
      'SELECT count(*) FROM import_rows WHERE import_id = $1',
      [job.id],
    );
    expect(Number(count)).toBe(0);
    expect((await getImport(second.url, tenant.token, job.id)).completed_at).not.toBeNull();
  });

  it('should create every service of a services import once, with one activate order each, across a SIGKILL', async () => {
    const db = suiteDatabaseUrl();
    const first = await start(HOLD_MS);
    const slug = uniqueSlug('imps');
    const tenant = await createTenantWithToken(first.url, ['subscribers:*', 'provisioning:*'], slug);
    const subscriber = await createSubscriber(first.url, tenant.token, { status: 'active' });
    const plan = await createPlan(first.url, tenant.token);
    const count = 60;
    const rows = Array.from({ length: count }, (_, i) => [
      `${slug}-svc-${i + 1}`,
      subscriber.external_id!,
      plan.id,
      `${slug}.user${i + 1}`,
      'correct-horse-42',
    ]);
    const res = await postImport(
      first.url,
      tenant.token,
      toCsv(['external_id', 'subscriber_external_id', 'plan_id', 'pppoe_username', 'pppoe_password'], rows),
      'text/csv',
      { kind: 'services' },
    );
    const job = ensure(res, 202, 'upload').body.data as ImportJob;

    const killedIn = await killInBatch(first, 2);
    expect(killedIn).toEqual([21, 30]);
    await first.exited;
    const [left] = await queryAt<{ rows_done: number; created: number }>(
      db,
      'SELECT rows_done, created FROM imports WHERE id = $1',
      [job.id],
    );
    expect(left).toEqual({ rows_done: 20, created: 20 });

    const second = await start(0);
    const done = await waitForImport(second.url, tenant.token, job.id, 60_000);
    expect(done).toMatchObject({
      status: 'completed',
      rows_done: count,
      created: count,
      updated: 0,
      failed: 0,
    });

    const services = await queryAt<{ id: string; external_id: string }>(
      db,
      'SELECT v.id, v.external_id FROM services v JOIN tenants t ON t.id = v.tenant_id WHERE t.slug = $1',
      [slug],
    );
    expect(services).toHaveLength(count);
    expect(repeats(services.map((s) => s.external_id))).toEqual({});
    const orders = await queryAt<{ service_id: string }>(
      db,
      `SELECT o.service_id FROM provisioning_orders o JOIN tenants t ON t.id = o.tenant_id
        WHERE t.slug = $1 AND o.action = 'activate'`,
      [slug],
    );
    expect(orders).toHaveLength(count);
    expect(repeats(orders.map((o) => o.service_id))).toEqual({});
    const created = await queryAt<{ subject_id: string }>(
      db,
      `SELECT e.subject_id FROM events e JOIN tenants t ON t.id = e.tenant_id
        WHERE t.slug = $1 AND e.type = 'service.created'`,
      [slug],
    );
    expect(created).toHaveLength(count);
    expect(repeats(created.map((e) => e.subject_id))).toEqual({});
  });
});
