import { Charge, ChargeSource, ChargeStatus } from './charge.entity';
import { chargeLine, chargesFitting } from './charge-line';

const charge = (id: string, amount: number, fields: Partial<Charge> = {}): Charge =>
  Object.assign(new Charge(), {
    tenantId: 'ten_1',
    id,
    subscriberId: 'sub_1',
    serviceId: null,
    description: `Charge ${id}`,
    quantity: 1,
    unitAmount: amount,
    amount,
    currency: 'EUR',
    status: ChargeStatus.Pending,
    source: ChargeSource.Api,
    sourceId: null,
    periodStart: null,
    periodEnd: null,
    taxRateIds: null,
    ...fields,
  });

describe('chargeLine', () => {
  it('should carry a one-off charge as a line naming it, with no service or period', () => {
    const line = chargeLine(charge('chg_1', 1500, { quantity: 3, unitAmount: 500 }));
    expect(line).toEqual({
      description: 'Charge chg_1',
      quantity: 3,
      unit_amount: 500,
      amount: 1500,
      charge_id: 'chg_1',
    });
  });

  it("should carry a termination's credit with its service and the days it covers", () => {
    const line = chargeLine(
      charge('chg_2', -700, {
        source: ChargeSource.Termination,
        serviceId: 'svc_1',
        periodStart: '2026-02-20',
        periodEnd: '2026-02-28',
      }),
    );
    expect(line).toEqual({
      description: 'Charge chg_2',
      quantity: 1,
      unit_amount: -700,
      amount: -700,
      charge_id: 'chg_2',
      service_id: 'svc_1',
      period_start: '2026-02-20',
      period_end: '2026-02-28',
    });
  });
});

describe('chargesFitting', () => {
  const fee = charge('chg_fee', 500);
  const credit = charge('chg_credit', -800);

  it('should take every charge when the invoice stays at 0 or more', () => {
    expect(chargesFitting([fee, credit], 300)).toEqual([fee, credit]); // 300 + 500 - 800 = 0
    expect(chargesFitting([fee, credit], 1000)).toEqual([fee, credit]);
    expect(chargesFitting([], 0)).toEqual([]);
  });

  it('should leave the credits for later when they would take the invoice below zero', () => {
    expect(chargesFitting([fee, credit], 299)).toEqual([fee]); // 299 + 500 - 800 = -1
    expect(chargesFitting([credit], 0)).toEqual([]);
  });

  it('should keep a charge of 0 with those that add to the invoice', () => {
    const free = charge('chg_free', 0);
    expect(chargesFitting([credit, free, fee], 0)).toEqual([free, fee]);
  });
});
