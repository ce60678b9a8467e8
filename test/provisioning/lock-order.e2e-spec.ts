import { randomBytes } from 'node:crypto';
import request, { type Response } from 'supertest';
import { expectError, expectList, expectSuccess } from '../support/envelope';
import { bearer } from '../support/factories';
import {
  createPlan,
  createService,
  DEFAULT_PPPOE_PASSWORD,
  getService,
  type Order,
  postAction,
  PROVISIONING_SCOPES,
  type Service,
  waitForOrder,
  listOrders,
} from '../support/provisioning-factory';
import { createSubscriber } from '../support/subscriber-factory';
import { createTenantWithToken, startTestApp, type TenantWithToken, type TestApp } from '../support/test-app';
import { letTimePass } from '../support/wait-for';
import { FAST_WORKER } from '../support/network-factory';

/**
 * Issue 27 item 3, on either database (the race itself, two instances on PostgreSQL, is
 * test/reliability/deadlocks.reliability-spec.ts): the one lock order (docs/decisions.md "One lock order") and the
 * transaction runner's retry of a deadlock or serialization failure.
 *
 * - A PATCH of a network field looks for the service's open order right after locking the service, and refuses
 *   (409 order_in_progress) before writing anything; a field the network does not see is saved.
 * - Parallel PATCHes and actions with the worker running (services locked before their orders): no 5xx, every order
 *   completed once, one order per accepted request.
 * - A deadlock (40P01) or serialization failure (40001) is injected by a trigger on `services` (keyed by a password
 *   that names the code, how many times to fail and a sequence to count in, since a sequence outlives the rollback):
 *   a PATCH that loses once is run again and answers 200, one that always loses answers 503 with Retry-After and
 *   writes nothing, and the worker's completion that loses once completes its order on its first claim.
 */

const SUFFIX = randomBytes(4).toString('hex');
const TRIGGER = `test_injected_conflict_${SUFFIX}`;

function patch(t: TestApp, token: string, id: string, body: Record<string, unknown>) {
  return request(t.http).patch(`/api/v1/services/${id}`).set(bearer(token)).send(body);
}

function ordersOf(t: TestApp, token: string, serviceId: string): Promise<Order[]> {
  return listOrders(t, token, { service_id: serviceId });
}

async function eventSubjects(t: TestApp, token: string, type: string, subjectId?: string): Promise<string[]> {
  const res = await request(t.http)
    .get('/api/v1/events')
    .query({ type, limit: 100, ...(subjectId ? { subject_id: subjectId } : {}) })
    .set(bearer(token));
  expectList(res);
  return (res.body.data as { subject_id: string }[]).map((event) => event.subject_id);
}

/** A password that makes the trigger fail the service's UPDATE `times` times with `code`. */
async function injecting(t: TestApp, code: '40P01' | '40001', times: number): Promise<string> {
  const sequence = `test_inject_${randomBytes(6).toString('hex')}`;
  await t.dataSource.query(`CREATE SEQUENCE ${sequence}`);
  return `inject-${code}-${times}-${sequence}`;
}

describe('Provisioning lock order: a network change while an order is open (issue 27 item 3)', () => {
  let idle: TestApp;
  let isp: TenantWithToken;
  let subscriberId: string;

  beforeAll(async () => {
    idle = await startTestApp({ ...FAST_WORKER, PROVISIONING_WORKER_ENABLED: 'false' });
    isp = await createTenantWithToken(idle, PROVISIONING_SCOPES);
    subscriberId = (await createSubscriber(idle, isp.token, { status: 'active' })).id;
  });

  afterAll(async () => {
    await idle.close();
  });

  it('should refuse a password or address change with 409 order_in_progress and write nothing, but save other fields', async () => {
    const { service } = await createService(idle, isp.token, subscriberId);
    for (const body of [{ pppoe_password: 'another-secret-1' }, { static_ipv4: '192.0.2.77' }]) {
      expectError(await patch(idle, isp.token, service.id, body), 409, 'order_in_progress', 'service_id');
    }
    const [row] = await idle.dataSource.query<{ pppoe_password: string; static_ipv4: string | null }[]>(
      'SELECT pppoe_password, static_ipv4 FROM services WHERE id = $1',
      [service.id],
    );
    expect(row).toEqual({ pppoe_password: DEFAULT_PPPOE_PASSWORD, static_ipv4: null });
    expect(await eventSubjects(idle, isp.token, 'service.updated', service.id)).toEqual([]);
    expect((await ordersOf(idle, isp.token, service.id)).map((order) => order.action)).toEqual(['activate']);

    const saved = await patch(idle, isp.token, service.id, { installation_address: 'Rack 4' });
    expectSuccess(saved);
    expect(saved.body.data).toMatchObject({ installation_address: 'Rack 4', static_ipv4: null });
  });
});

describe('Provisioning lock order with the worker running, and conflicts retried (issue 27 item 3)', () => {
  let t: TestApp;
  let isp: TenantWithToken;
  let subscriberId: string;
  let planId: string;

  const activeService = async (overrides: Record<string, unknown> = {}): Promise<Service> => {
    const { service, order } = await createService(t, isp.token, subscriberId, {
      plan_id: planId,
      ...overrides,
    });
    await waitForOrder(t, isp.token, order.id, ['completed']);
    return getService(t, isp.token, service.id);
  };

  beforeAll(async () => {
    t = await startTestApp(FAST_WORKER);
    isp = await createTenantWithToken(t, PROVISIONING_SCOPES);
    subscriberId = (await createSubscriber(t, isp.token, { status: 'active' })).id;
    planId = (await createPlan(t, isp.token)).id;
    // Fails an UPDATE of a service whose new password is inject-<code>-<times>-<sequence>, `times` times.
    await t.dataSource.query(`
      CREATE FUNCTION ${TRIGGER}() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.pppoe_password ~ '^inject-(40P01|40001)-[0-9]+-test_inject_[0-9a-f]+$'
           AND nextval(split_part(NEW.pppoe_password, '-', 4)::regclass) <= split_part(NEW.pppoe_password, '-', 3)::int
        THEN
          RAISE EXCEPTION 'injected concurrency conflict' USING ERRCODE = split_part(NEW.pppoe_password, '-', 2);
        END IF;
        RETURN NEW;
      END $$`);
    await t.dataSource.query(
      `CREATE TRIGGER ${TRIGGER} BEFORE UPDATE ON services FOR EACH ROW EXECUTE FUNCTION ${TRIGGER}()`,
    );
  });

  afterAll(async () => {
    await t.dataSource.query(`DROP TRIGGER IF EXISTS ${TRIGGER} ON services`);
    await t.dataSource.query(`DROP FUNCTION IF EXISTS ${TRIGGER}()`);
    await t.close();
  });

  it('should answer no 5xx to parallel changes and actions, and complete every order once', async () => {
    const services = await Promise.all([activeService(), activeService(), activeService()]);
    const answers: { kind: string; service: string; res: Response }[] = [];
    for (let round = 0; round < 4; round += 1) {
      const action = round % 2 === 0 ? 'suspend' : 'resume';
      answers.push(
        ...(await Promise.all(
          services.flatMap((service, i) => [
            patch(t, isp.token, service.id, { pppoe_password: `pw-${round}-${i}-${SUFFIX}` }).then((res) => ({
              kind: 'modify',
              service: service.id,
              res,
            })),
            patch(t, isp.token, service.id, { static_ipv4: `198.51.100.${round * 10 + i + 1}` }).then(
              (res) => ({
                kind: 'modify',
                service: service.id,
                res,
              }),
            ),
            postAction(t, isp.token, service.id, { action }).then((res) => ({
              kind: 'action',
              service: service.id,
              res,
            })),
          ]),
        )),
      );
      // A little time between rounds on purpose, so that the worker takes up some orders between them.
      await letTimePass(30);
    }
    for (const { kind, res } of answers) {
      if (res.status === 409) {
        expect(['order_in_progress', 'invalid_state_transition']).toContain(res.body.error.code);
      } else {
        expectSuccess(res, kind === 'action' ? 202 : 200);
      }
    }
    for (const service of services) {
      const orders = await ordersOf(t, isp.token, service.id);
      const ended = await Promise.all(
        orders.map((order) => waitForOrder(t, isp.token, order.id, ['completed', 'failed', 'cancelled'])),
      );
      expect(ended.map((order) => order.status)).toEqual(ended.map(() => 'completed'));
      const accepted = (kind: string) =>
        answers.filter((a) => a.kind === kind && a.service === service.id && a.res.status < 300).length;
      expect(orders.filter((order) => order.action === 'modify')).toHaveLength(accepted('modify'));
      expect(orders.filter((order) => ['suspend', 'resume'].includes(order.action))).toHaveLength(
        accepted('action'),
      );
      const completed = await eventSubjects(t, isp.token, 'provisioning_order.completed');
      for (const order of orders) {
        expect(completed.filter((id) => id === order.id)).toHaveLength(1);
      }
    }
  });

  it('should run a PATCH that lost a deadlock once again, and answer 200 with one order', async () => {
    const service = await activeService();
    const password = await injecting(t, '40P01', 1);
    const res = await patch(t, isp.token, service.id, { pppoe_password: password });
    expectSuccess(res);
    const modifies = (await ordersOf(t, isp.token, service.id)).filter((order) => order.action === 'modify');
    expect(modifies).toHaveLength(1);
    await waitForOrder(t, isp.token, modifies[0].id, ['completed']);
    expect(await eventSubjects(t, isp.token, 'service.updated', service.id)).toEqual([service.id]);
  });

  it('should answer 503 service_unavailable with Retry-After when every run loses, and write nothing', async () => {
    const service = await activeService();
    const password = await injecting(t, '40001', 1000);
    const res = await patch(t, isp.token, service.id, { pppoe_password: password });
    expectError(res, 503, 'service_unavailable');
    expect(res.headers['retry-after']).toBe('1');
    expect((await ordersOf(t, isp.token, service.id)).map((order) => order.action)).toEqual(['activate']);
    expect(await eventSubjects(t, isp.token, 'service.updated', service.id)).toEqual([]);
  });

  it('should complete an order whose completion lost a deadlock once, on its first claim', async () => {
    const password = await injecting(t, '40P01', 1);
    const { service, order } = await createService(t, isp.token, subscriberId, {
      plan_id: planId,
      pppoe_password: password,
    });
    const done = await waitForOrder(t, isp.token, order.id, ['completed', 'failed']);
    expect(done).toMatchObject({ status: 'completed', attempts: 1 });
    expect(await getService(t, isp.token, service.id)).toMatchObject({ status: 'active' });
    expect(await eventSubjects(t, isp.token, 'provisioning_order.completed', order.id)).toEqual([order.id]);
  });
});
