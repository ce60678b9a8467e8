import type { Tx } from '../database/transaction-runner';
import { Service } from './provisioning.entity';
import { ServiceLifecycle } from './service-lifecycle';

const TX = {} as Tx;
const service = (tenantId: string, id: string): Service => Object.assign(new Service(), { tenantId, id });

describe('ServiceLifecycle', () => {
  it("should hand each hook the ended services per tenant, in the caller's transaction", async () => {
    const lifecycle = new ServiceLifecycle();
    const calls: [Tx, string, string[]][] = [];
    lifecycle.onEnded((tx, tenantId, ids) => {
      calls.push([tx, tenantId, ids]);
      return Promise.resolve();
    });
    await lifecycle.ended(TX, [
      service('ten_1', 'svc_a'),
      service('ten_2', 'svc_b'),
      service('ten_1', 'svc_c'),
    ]);
    expect(calls).toEqual([
      [TX, 'ten_1', ['svc_a', 'svc_c']],
      [TX, 'ten_2', ['svc_b']],
    ]);
  });

  it('should run the hooks in the order they were registered, one after the other', async () => {
    const lifecycle = new ServiceLifecycle();
    const order: string[] = [];
    lifecycle.onEnded(async () => {
      await new Promise((resolve) => setImmediate(resolve));
      order.push('first');
    });
    lifecycle.onEnded(() => {
      order.push('second');
      return Promise.resolve();
    });
    await lifecycle.ended(TX, [service('ten_1', 'svc_a')]);
    expect(order).toEqual(['first', 'second']);
  });

  it('should call no hook when no service ended, and fail the transaction when a hook fails', async () => {
    const lifecycle = new ServiceLifecycle();
    const hook = jest.fn(() => Promise.reject(new Error('settlement failed')));
    lifecycle.onEnded(hook);
    await lifecycle.ended(TX, []);
    expect(hook).not.toHaveBeenCalled();
    await expect(lifecycle.ended(TX, [service('ten_1', 'svc_a')])).rejects.toThrow('settlement failed');
  });

  it("should hand the plan history hooks each tenant's subscribers once, and the repriced hooks the plan", async () => {
    const lifecycle = new ServiceLifecycle();
    const calls: unknown[][] = [];
    lifecycle.onPlanHistory((tx, tenantId, ids) => {
      calls.push([tx, tenantId, ids]);
      return Promise.resolve();
    });
    lifecycle.onPlanRepriced((tx, tenantId, planId) => {
      calls.push([tx, tenantId, planId]);
      return Promise.resolve();
    });
    await lifecycle.planHistoryMoved(TX, [
      { tenantId: 'ten_1', subscriberId: 'sub_a' },
      { tenantId: 'ten_2', subscriberId: 'sub_b' },
      { tenantId: 'ten_1', subscriberId: 'sub_a' },
      { tenantId: 'ten_1', subscriberId: 'sub_c' },
    ]);
    await lifecycle.planHistoryMoved(TX, []);
    await lifecycle.planRepriced(TX, 'ten_1', 'plan_x');
    expect(calls).toEqual([
      [TX, 'ten_1', ['sub_a', 'sub_c']],
      [TX, 'ten_2', ['sub_b']],
      [TX, 'ten_1', 'plan_x'],
    ]);
  });
});
