import { CapState, OrderAction, ServiceStatus } from '../service-status';
import { decide, periodOn } from './data-cap-rules';

const base = {
  status: ServiceStatus.Active,
  capState: CapState.Normal,
  capBytes: 1000,
  capAction: 'throttle',
  usedBytes: 0,
  allowanceBytes: 1000,
  warned: false,
};

describe('periodOn', () => {
  it('should answer the billing-day month holding the day, the billing day itself included', () => {
    expect(periodOn('2026-12-03', 1)).toEqual({ start: '2026-12-01', end: '2027-01-01' });
    expect(periodOn('2026-12-03', 3)).toEqual({ start: '2026-12-03', end: '2027-01-03' });
    expect(periodOn('2026-12-02', 3)).toEqual({ start: '2026-11-03', end: '2026-12-03' });
    expect(periodOn('2027-01-10', 15)).toEqual({ start: '2026-12-15', end: '2027-01-15' });
  });
});

describe('decide', () => {
  it('should do nothing under 80 % of the allowance', () => {
    expect(decide({ ...base, usedBytes: 799 })).toEqual({ warn: false, action: null });
  });

  it('should warn from 80 %, once per period', () => {
    expect(decide({ ...base, usedBytes: 800 })).toEqual({ warn: true, action: null });
    expect(decide({ ...base, usedBytes: 900, warned: true })).toEqual({ warn: false, action: null });
  });

  it("should cap at the allowance with the plan's action", () => {
    expect(decide({ ...base, usedBytes: 1000, warned: true }).action).toBe(OrderAction.CapThrottle);
    expect(decide({ ...base, usedBytes: 5000, capAction: 'block' })).toEqual({
      warn: true,
      action: OrderAction.CapBlock,
    });
  });

  it('should not cap a suspended service, nor one already capped', () => {
    expect(
      decide({ ...base, usedBytes: 1000, status: ServiceStatus.Suspended, warned: true }).action,
    ).toBeNull();
    expect(
      decide({ ...base, usedBytes: 1000, capState: CapState.Throttled, warned: true }).action,
    ).toBeNull();
  });

  it('should restore a capped service under its allowance (a new period, a top-up) or whose plan has no cap', () => {
    expect(decide({ ...base, usedBytes: 10, capState: CapState.Throttled }).action).toBe(
      OrderAction.CapRestore,
    );
    expect(
      decide({ ...base, usedBytes: 1500, allowanceBytes: 2000, capState: CapState.Blocked, warned: true })
        .action,
    ).toBe(OrderAction.CapRestore);
    expect(
      decide({
        ...base,
        capBytes: null,
        allowanceBytes: null,
        usedBytes: 5000,
        capState: CapState.Throttled,
      }),
    ).toEqual({ warn: false, action: OrderAction.CapRestore });
  });
});
