import { ProvisioningOrder, Service, SessionOutcome } from './provisioning.entity';
import { completedOrder, moveService } from './provisioning-worker';
import { OrderAction, OrderStatus, ServiceStatus } from './service-status';

const EARLIER = new Date('2026-01-10T08:00:00.000Z');
const NOW = new Date('2026-03-01T12:00:00.000Z');

const service = (fields: Partial<Service>): Service =>
  Object.assign(new Service(), {
    id: 'svc_1',
    planId: 'plan_a',
    status: ServiceStatus.Active,
    activatedAt: EARLIER,
    terminatedAt: null,
    updatedAt: EARLIER,
    ...fields,
  });

const order = (action: OrderAction, planId = 'plan_a'): ProvisioningOrder =>
  Object.assign(new ProvisioningOrder(), {
    id: 'ord_1',
    action,
    planId,
    status: OrderStatus.InProgress,
    attempts: 2,
    lastError: 'NAS timeout',
    leaseId: 'lease_1',
    leaseUntil: NOW,
    completedAt: null,
    disconnect: null,
    coa: null,
    updatedAt: EARLIER,
  });

describe('moveService', () => {
  it('should stamp the first activation, and keep it through a later suspension and resumption', () => {
    const pending = service({ status: ServiceStatus.Pending, activatedAt: null });
    expect(moveService(pending, order(OrderAction.Activate), ServiceStatus.Active, NOW)).toBe(true);
    expect(pending).toMatchObject({ status: ServiceStatus.Active, activatedAt: NOW, updatedAt: NOW });

    const resumed = service({ status: ServiceStatus.Suspended });
    expect(moveService(resumed, order(OrderAction.Resume), ServiceStatus.Active, NOW)).toBe(true);
    expect(resumed.activatedAt).toBe(EARLIER);
  });

  it('should stamp the termination', () => {
    const ended = service({});
    expect(moveService(ended, order(OrderAction.Terminate), ServiceStatus.Terminated, NOW)).toBe(true);
    expect(ended).toMatchObject({
      status: ServiceStatus.Terminated,
      terminatedAt: NOW,
      activatedAt: EARLIER,
    });
  });

  it("should put the service on the order's plan", () => {
    const changed = service({});
    expect(moveService(changed, order(OrderAction.ChangePlan, 'plan_b'), ServiceStatus.Active, NOW)).toBe(
      true,
    );
    expect(changed).toMatchObject({ planId: 'plan_b', updatedAt: NOW });
  });

  it('should answer no change, and leave updated_at, when the order changed neither status nor plan', () => {
    const same = service({});
    expect(moveService(same, order(OrderAction.Modify), ServiceStatus.Active, NOW)).toBe(false);
    expect(same.updatedAt).toBe(EARLIER);
  });
});

describe('completedOrder', () => {
  it("should complete the order now, release its claim, clear its error and keep the driver's outcome", () => {
    const claimed = order(OrderAction.Suspend);
    const done = completedOrder(claimed, { disconnect: SessionOutcome.Acked }, NOW);
    expect(done).toBeInstanceOf(ProvisioningOrder);
    expect(done).toMatchObject({
      id: 'ord_1',
      attempts: 2,
      status: OrderStatus.Completed,
      completedAt: NOW,
      updatedAt: NOW,
      lastError: null,
      leaseId: null,
      leaseUntil: null,
      disconnect: SessionOutcome.Acked,
      coa: null,
    });
    // The claimed row is left as it was read.
    expect(claimed.status).toBe(OrderStatus.InProgress);
  });

  it('should record no session outcome for a driver that reached none', () => {
    const done = completedOrder(order(OrderAction.Activate), {}, NOW);
    expect([done.disconnect, done.coa]).toEqual([null, null]);
  });
});
