import fc from 'fast-check';
import { createSubscriber } from '../support/subscriber-factory';
import { createPlan, type ServicePlan } from '../support/provisioning-factory';
import { createTenantWithToken, startTestApp, type TestApp } from '../support/test-app';
import { getReport, mrrAt, type ServiceWorld } from '../support/reports-factory';
import { rebuildMrr } from '../support/report-oracle';

/**
 * Issue #32 item 4: the MRR bridge as a property. Random service histories (activations, plan changes, terminations
 * at random instants over 2029–2030, plans monthly, quarterly and yearly in two currencies) are written straight
 * into a fresh tenant's services and orders; for a random window, every month of the report must equal a reference
 * computed here from those rows: the closing MRR per currency, each subscriber's movement classified from its MRR
 * month by month, and opening + new + expansion + reactivation − contraction − churned = closing.
 */

const START = Date.UTC(2029, 0, 1);
const SPAN_MS = Date.UTC(2031, 0, 1) - START;

interface Life {
  currency: 0 | 1;
  services: {
    plan: number;
    at: number;
    changes: { plan: number; after: number }[];
    endsAfter: number | null;
  }[];
}

const life: fc.Arbitrary<Life> = fc.record({
  currency: fc.constantFrom(0 as const, 1 as const),
  services: fc.array(
    fc.record({
      plan: fc.nat({ max: 2 }),
      at: fc.double({ min: 0, max: 0.95, noNaN: true }),
      changes: fc.array(fc.record({ plan: fc.nat({ max: 2 }), after: fc.integer({ min: 1, max: 200 }) }), {
        maxLength: 2,
      }),
      endsAfter: fc.option(fc.integer({ min: 0, max: 400 }), { nil: null }),
    }),
    { minLength: 1, maxLength: 3 },
  ),
});

function monthsBetween(first: string, last: string): string[] {
  const out: string[] = [];
  let [y, m] = first.split('-').map(Number);
  const [ly, lm] = last.split('-').map(Number);
  while (y < ly || (y === ly && m <= lm)) {
    out.push(`${y}-${String(m).padStart(2, '0')}`);
    m = m === 12 ? 1 : m + 1;
    y = m === 1 ? y + 1 : y;
  }
  return out;
}

describe('MRR bridge property (e2e)', () => {
  let t: TestApp;
  let seq = 0;
  let tenantId: string;
  let token: string;
  const plans: ServicePlan[][] = [[], []];
  const planMap: ServiceWorld['plans'] = new Map();

  beforeAll(async () => {
    t = await startTestApp();
    ({ tenantId, token } = await createTenantWithToken(t, ['admin']));
    for (const [c, currency] of ['EUR', 'USD'].entries()) {
      for (const [price, billing_period] of [
        [3000, 'monthly'],
        [9001, 'quarterly'],
        [12001, 'yearly'],
      ] as const) {
        const plan = await createPlan(t, token, { price: price + c, currency, billing_period });
        plans[c].push(plan);
        planMap.set(plan.id, plan);
      }
    }
  });

  afterAll(async () => {
    await t?.close();
  });

  it('should equal the month-end services in every month, and bridge opening to closing by the movements', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(life, { minLength: 1, maxLength: 6 }),
        fc.integer({ min: 0, max: 22 }),
        fc.integer({ min: 0, max: 12 }),
        async (lives, offset, length) => {
          // Each run starts from no services: the last run's are deleted (the tenant and its plans stay).
          await t.dataSource.query('DELETE FROM provisioning_orders WHERE tenant_id = $1', [tenantId]);
          await t.dataSource.query('DELETE FROM services WHERE tenant_id = $1', [tenantId]);
          const world: ServiceWorld = { services: [], orders: [], plans: planMap };
          for (const one of lives) {
            const subscriber = await createSubscriber(t, token, { status: 'active' });
            for (const service of one.services) {
              const id = `svc_prop${(++seq).toString().padStart(10, '0')}`;
              const activated = new Date(START + Math.floor(service.at * SPAN_MS));
              const day = (days: number) => new Date(activated.getTime() + days * 86_400_000 + 3_600_000);
              const terminated = service.endsAfter === null ? null : day(service.endsAfter);
              const changes = service.changes
                .map((change) => ({ plan: plans[one.currency][change.plan].id, at: day(change.after) }))
                .filter((change) => terminated === null || change.at < terminated)
                .sort((a, b) => a.at.getTime() - b.at.getTime());
              const first = plans[one.currency][service.plan].id;
              const current = changes.length > 0 ? changes[changes.length - 1].plan : first;
              await t.dataSource.query(
                `INSERT INTO services (tenant_id, id, subscriber_id, plan_id, status, pppoe_username, radius_username,
                   pppoe_password, activated_at, terminated_at, created_at, updated_at)
                 VALUES ($1, $2, $3, $4, $5, $2, $2, 'secret', $6, $7, $6, $6)`,
                [
                  tenantId,
                  id,
                  subscriber.id,
                  current,
                  terminated ? 'terminated' : 'active',
                  activated,
                  terminated,
                ],
              );
              const orders = [
                { action: 'activate', plan: first, at: activated },
                ...changes.map((c) => ({ action: 'change_plan', ...c })),
              ];
              for (const [k, order] of orders.entries()) {
                await t.dataSource.query(
                  `INSERT INTO provisioning_orders (tenant_id, id, service_id, subscriber_id, action, status, plan_id,
                     attempts, next_attempt_at, completed_at, created_at, updated_at)
                   VALUES ($1, $2, $3, $4, $5, 'completed', $6, 1, $7, $7, $7, $7)`,
                  [tenantId, `ord_${id.slice(4)}${k}`, id, subscriber.id, order.action, order.plan, order.at],
                );
                world.orders.push({
                  service_id: id,
                  action: order.action,
                  status: 'completed',
                  plan_id: order.plan,
                  completed_at: order.at.toISOString(),
                });
              }
              world.services.push({
                id,
                subscriber_id: subscriber.id,
                plan_id: current,
                activated_at: activated.toISOString(),
                terminated_at: terminated?.toISOString() ?? null,
              } as ServiceWorld['services'][number]);
            }
          }
          // The rows went straight into the tables, past the order completions that keep the MRR steps: rebuilt as
          // the migration's backfill does.
          await rebuildMrr(t.dataSource.manager, tenantId);
          const all = monthsBetween('2028-12', '2031-12');
          const from = all[1 + offset];
          const to = all[Math.min(all.length - 1, 1 + offset + length)];
          const report = await getReport<{ months: Record<string, number | string>[] }>(t, token, 'mrr', {
            from: `${from}-01`,
            to: `${to}-28`,
          });
          // Each subscriber's MRR per currency for every month from 2028-12 on (before any service: 0).
          const series = new Map<string, number[]>();
          for (const [index, month] of all.entries()) {
            for (const item of mrrAt(world, month)) {
              const key = `${item.subscriberId} ${item.currency}`;
              const row = series.get(key) ?? all.map(() => 0);
              row[index] += item.mrr;
              series.set(key, row);
            }
          }
          for (const currency of ['EUR', 'USD']) {
            const rows = report.months.filter((row) => row.currency === currency);
            const mine = [...series].filter(([key]) => key.endsWith(` ${currency}`)).map(([, row]) => row);
            // A currency shows once some subscriber had MRR in it by the window's end.
            if (!mine.some((mrr) => mrr.slice(0, all.indexOf(to) + 1).some((value) => value > 0))) {
              expect(rows).toEqual([]);
              continue;
            }
            expect(rows.map((row) => row.month)).toEqual(monthsBetween(from, to));
            for (const row of rows) {
              const i = all.indexOf(row.month as string);
              const expected = { new: 0, expansion: 0, reactivation: 0, contraction: 0, churned: 0 };
              for (const mrr of mine) {
                const [before, now] = [mrr[i - 1], mrr[i]];
                const had = mrr.slice(0, i - 1).some((value) => value > 0);
                if (before === 0 && now > 0) {
                  expected[had ? 'reactivation' : 'new'] += now;
                } else if (before > 0 && now === 0) {
                  expected.churned += before;
                } else if (now > before) {
                  expected.expansion += now - before;
                } else {
                  expected.contraction += before - now;
                }
              }
              expect(row).toMatchObject({
                opening_mrr: mine.reduce((sum, mrr) => sum + mrr[i - 1], 0),
                closing_mrr: mine.reduce((sum, mrr) => sum + mrr[i], 0),
                closing_subscribers: mine.filter((mrr) => mrr[i] > 0).length,
                new_mrr: expected.new,
                expansion_mrr: expected.expansion,
                reactivation_mrr: expected.reactivation,
                contraction_mrr: expected.contraction,
                churned_mrr: expected.churned,
              });
              const bridged =
                (row.opening_mrr as number) +
                (row.new_mrr as number) +
                (row.expansion_mrr as number) +
                (row.reactivation_mrr as number) -
                (row.contraction_mrr as number) -
                (row.churned_mrr as number);
              expect(bridged).toBe(row.closing_mrr);
            }
          }
        },
      ),
      { numRuns: 20 },
    );
  }, 300_000);
});
