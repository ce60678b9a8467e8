import type { EntityManager } from 'typeorm';
import { TerminationCredit } from './termination-credit';

const MANAGER = {} as EntityManager;

describe('TerminationCredit', () => {
  it('should credit every termination until automation registers its policy', async () => {
    await expect(new TerminationCredit().appliesTo(MANAGER, 'ten_any')).resolves.toBe(true);
  });

  it("should ask the registered policy, per tenant, in the caller's transaction", async () => {
    const credit = new TerminationCredit();
    const asked: [EntityManager, string][] = [];
    credit.use((manager, tenantId) => {
      asked.push([manager, tenantId]);
      return Promise.resolve(tenantId !== 'ten_off');
    });
    await expect(credit.appliesTo(MANAGER, 'ten_on')).resolves.toBe(true);
    await expect(credit.appliesTo(MANAGER, 'ten_off')).resolves.toBe(false);
    expect(asked).toEqual([
      [MANAGER, 'ten_on'],
      [MANAGER, 'ten_off'],
    ]);
  });

  it('should let a later registration replace the earlier one', async () => {
    const credit = new TerminationCredit();
    credit.use(() => Promise.resolve(false));
    credit.use(() => Promise.resolve(true));
    await expect(credit.appliesTo(MANAGER, 'ten_1')).resolves.toBe(true);
  });
});
