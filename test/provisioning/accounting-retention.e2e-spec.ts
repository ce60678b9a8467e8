import { expectList, expectSuccess } from '../support/envelope';
import {
  addDays,
  FAST_WORKER,
  getUsage,
  insertRadacct,
  listSessions,
  PinnableClock,
  randomNasIp,
  type Session,
  uniqueAcctSessionId,
  updateRadacct,
  type Usage,
} from '../support/network-factory';
import { createPlan, createService, PROVISIONING_SCOPES } from '../support/provisioning-factory';
import { createSubscriber } from '../support/subscriber-factory';
import { createTenantWithToken, startTestApp, type TestApp } from '../support/test-app';
import { waitUntil } from '../support/wait-for';

/**
 * Issue #33 item 5: radacct's retention. Closed sessions that stopped more than RADACCT_RETENTION_DAYS ago are deleted
 * by the worker, batch by batch; open sessions never are; the daily usage stays, so GET /usage answers the same.
 */
describe('Network: accounting retention (RADACCT_RETENTION_DAYS)', () => {
  let t: TestApp;
  const clock = new PinnableClock();
  const nasIp = randomNasIp();

  beforeAll(async () => {
    t = await startTestApp(
      {
        ...FAST_WORKER,
        RADACCT_RETENTION_DAYS: '90',
        // Batches of 2: the worker must go on until none is left.
        RADACCT_PRUNE_BATCH_SIZE: '2',
        RADACCT_PRUNE_POLL_MS: '50',
      },
      { clock },
    );
  });

  afterAll(async () => {
    clock.unpin();
    await t?.close();
  });

  const at = (day: string, time: string) => `${day}T${time}Z`;

  /** A session of `username` with `octets` added by an Interim-Update on `updated`, stopped at `stopped` (or open). */
  async function session(
    username: string,
    started: string,
    updated: string,
    stopped: string | null,
    octets: { in: number; out: number },
  ): Promise<string> {
    const id = await insertRadacct(t, {
      acctsessionid: uniqueAcctSessionId(),
      username,
      nasipaddress: nasIp,
      acctstarttime: started,
      acctinputoctets: 0,
      acctoutputoctets: 0,
    });
    await updateRadacct(t, id, {
      acctupdatetime: updated,
      acctinputoctets: octets.in,
      acctoutputoctets: octets.out,
    });
    if (stopped) {
      await updateRadacct(t, id, { acctstoptime: stopped, acctsessiontime: 3600 });
    }
    return id;
  }

  it('should prune the closed sessions past the retention in batches, never an open one, and keep the daily usage', async () => {
    const tenant = await createTenantWithToken(t, PROVISIONING_SCOPES);
    const subscriberId = (await createSubscriber(t, tenant.token, { status: 'active' })).id;
    const plan = await createPlan(t, tenant.token);
    const { service } = await createService(t, tenant.token, subscriberId, { plan_id: plan.id });
    const username = service.radius_username;
    const d0 = service.created_at.slice(0, 10);
    const [d1, d2, d3] = [1, 2, 3].map((n) => addDays(d0, n));

    // Closed long before the cutoff: one over midnight (d1 → d2), one on d3, three more on d1.
    const overMidnight = await session(username, at(d1, '22:00:00'), at(d2, '00:30:00'), at(d2, '01:00:00'), {
      in: 1000,
      out: 5000,
    });
    const onD3 = await session(username, at(d3, '08:00:00'), at(d3, '09:00:00'), at(d3, '10:00:00'), {
      in: 70,
      out: 90,
    });
    const more = [];
    for (let i = 0; i < 3; i++) {
      more.push(
        await session(username, at(d1, `0${i}:00:00`), at(d1, `0${i}:30:00`), at(d1, `0${i}:45:00`), {
          in: 1,
          out: 2,
        }),
      );
    }
    // Open since d1: never pruned, however old.
    const open = await session(username, at(d1, '12:00:00'), at(d1, '13:00:00'), null, { in: 300, out: 400 });
    // Closed after the cutoff.
    const recent = await session(
      username,
      at(addDays(d3, 20), '08:00:00'),
      at(addDays(d3, 20), '09:00:00'),
      at(addDays(d3, 20), '10:00:00'),
      { in: 5, out: 6 },
    );

    const usage = async (): Promise<Usage> => {
      const res = await getUsage(t, tenant.token, service.id, { from: d0, to: addDays(d3, 20) });
      expectSuccess(res);
      return res.body.data as Usage;
    };
    const sessionIds = async (): Promise<string[]> => {
      const res = await listSessions(t, tenant.token, service.id, { limit: '100' });
      expectList(res);
      return (res.body.data as Session[]).map((row) => row.id.replace(/^ses_/, '')).sort();
    };
    const before = await usage();
    expect(before.total).toEqual({ bytes_in: 1000 + 70 + 3 + 300 + 5, bytes_out: 5000 + 90 + 6 + 400 + 6 });
    expect(before.days.find((day) => day.date === d2)).toEqual({ date: d2, bytes_in: 1000, bytes_out: 5000 });
    expect(await sessionIds()).toHaveLength(7);

    // 90 days after d3's noon: everything stopped before d3 + 1 day, 12:00 is past the retention.
    clock.pin(at(addDays(d3, 91), '12:00:00'));
    const remaining = await waitUntil(sessionIds, (ids) => ids.length === 2, {
      what: 'the worker pruned radacct',
    });
    expect(remaining).toEqual([open, recent].sort());
    const gone = [overMidnight, onD3, ...more];
    expect(
      await t.dataSource.query(`SELECT radacctid FROM radacct WHERE radacctid = ANY($1::bigint[])`, [gone]),
    ).toEqual([]);
    // The daily usage of the pruned sessions is still there, and answers the same.
    const kept = await t.dataSource.query<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM radacct_daily_usage WHERE radacctid = ANY($1::bigint[])`,
      [gone],
    );
    expect(kept[0].n).toBeGreaterThanOrEqual(gone.length);
    expect(await usage()).toEqual(before);
    clock.unpin();
  });

  it('should keep a username correction of FreeRADIUS on the daily usage (the usage is read without radacct)', async () => {
    const tenant = await createTenantWithToken(t, PROVISIONING_SCOPES);
    const subscriberId = (await createSubscriber(t, tenant.token, { status: 'active' })).id;
    const plan = await createPlan(t, tenant.token);
    const { service } = await createService(t, tenant.token, subscriberId, { plan_id: plan.id });
    const d1 = addDays(service.created_at.slice(0, 10), 1);
    const id = await session('someone-else/x', at(d1, '10:00:00'), at(d1, '11:00:00'), null, {
      in: 10,
      out: 20,
    });
    await t.dataSource.query(`UPDATE radacct SET username = $2 WHERE radacctid = $1`, [
      id,
      service.radius_username,
    ]);
    const res = await getUsage(t, tenant.token, service.id, { from: d1, to: d1 });
    expectSuccess(res);
    expect(res.body.data.total).toEqual({ bytes_in: 10, bytes_out: 20 });
  });
});
