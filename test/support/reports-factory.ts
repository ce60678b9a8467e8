import request from 'supertest';
import { bearer } from './factories';
import { listAll } from './billing-factory';
import type { Service, ServicePlan } from './provisioning-factory';
import { ensure, type TestApp } from './test-app';
import { halfUp } from './billing-run-factory';

/** Issue #32 item 4: helpers of the reports suites (test/reports). */

export type Row = Record<string, unknown> & { currency: string };

export async function getReport<T = Record<string, unknown>>(
  t: TestApp,
  token: string,
  report: string,
  query: Record<string, string>,
): Promise<T> {
  const res = await request(t.http).get(`/api/v1/reports/${report}`).query(query).set(bearer(token));
  ensure(res, 200, `GET /reports/${report} ${JSON.stringify(query)}`);
  return res.body.data as T;
}

interface PlanOrder {
  service_id: string;
  action: string;
  status: string;
  plan_id: string;
  completed_at: string | null;
}

/** A plan's price per month, as docs/reports.md defines it (half up to the minor unit). */
export function monthlyPrice(plan: ServicePlan & { billing_period?: string }): number {
  const period = (plan as { billing_period?: string }).billing_period ?? 'monthly';
  const price = (plan as { price: number }).price;
  return period === 'quarterly' ? halfUp(price, 3) : period === 'yearly' ? halfUp(price, 12) : price;
}

/** What the API lists of a tenant's services, their plan orders and plans: what MRR is computed from. */
export interface ServiceWorld {
  services: Service[];
  orders: PlanOrder[];
  plans: Map<string, ServicePlan & { price: number; currency: string; name: string }>;
}

export async function serviceWorld(t: TestApp, token: string): Promise<ServiceWorld> {
  const services = await listAll<Service>(t, token, '/api/v1/services');
  const orders = (await listAll<PlanOrder>(t, token, '/api/v1/provisioning-orders')).filter(
    (order) => order.status === 'completed' && ['activate', 'change_plan'].includes(order.action),
  );
  const plans = await listAll<ServicePlan & { price: number; currency: string; name: string }>(
    t,
    token,
    '/api/v1/service-plans',
  );
  return { services, orders, plans: new Map(plans.map((plan) => [plan.id, plan])) };
}

/**
 * Each subscriber's MRR per currency and plan at the end of `month` (YYYY-MM): the services active at its last instant,
 * each on the plan its last completed activate or change_plan order set before then.
 */
export function mrrAt(
  world: ServiceWorld,
  month: string,
): { subscriberId: string; currency: string; planId: string; mrr: number }[] {
  const [year, m] = month.split('-').map(Number);
  const end = Date.UTC(year, m, 1);
  const out: { subscriberId: string; currency: string; planId: string; mrr: number }[] = [];
  for (const service of world.services) {
    if (service.activated_at === null || Date.parse(service.activated_at) >= end) {
      continue;
    }
    if (service.terminated_at !== null && Date.parse(service.terminated_at) < end) {
      continue;
    }
    const history = world.orders
      .filter((order) => order.service_id === service.id && Date.parse(order.completed_at as string) < end)
      .sort((a, b) => Date.parse(a.completed_at as string) - Date.parse(b.completed_at as string));
    const planId = history.length > 0 ? history[history.length - 1].plan_id : service.plan_id;
    const plan = world.plans.get(planId)!;
    out.push({
      subscriberId: service.subscriber_id,
      currency: plan.currency,
      planId,
      mrr: monthlyPrice(plan),
    });
  }
  return out;
}
