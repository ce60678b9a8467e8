import { setTimeout as sleep } from 'node:timers/promises';
import request from 'supertest';
import type { EntityManager } from 'typeorm';
import { NumberingService } from '../../src/billing';
import type { NumberingSeries } from '../../src/common/numbering-format';
import { expectSuccess } from '../support/envelope';
import { bearer } from '../support/factories';
import { createTenantWithToken, startTestApp, type TenantWithToken, type TestApp } from '../support/test-app';

interface Taken {
  sequence: number;
  number: string;
}

/** Rolls its transaction back after taking its numbers. */
class RolledBack extends Error {}

/**
 * The numbering series (billing's NumberingService, issue 29 item 5): numbers taken in the caller's transaction,
 * gapless and unique per series under concurrency and rollbacks, formatted with the tenant's format, restarting each
 * year when asked. On the embedded database the transactions queue for its one connection; on a real Postgres
 * (DATABASE_URL) they race for the series' lock.
 */
describe('Billing: document numbering series', () => {
  let t: TestApp;
  let numbering: NumberingService;

  beforeAll(async () => {
    t = await startTestApp({ BILLING_SCHEDULER_ENABLED: 'false', AUTOMATION_ENABLED: 'false' });
    numbering = t.app.get(NumberingService, { strict: false });
  });

  afterAll(async () => {
    await t.close();
  });

  const tenant = (): Promise<TenantWithToken> => createTenantWithToken(t, ['billing:read', 'billing:write']);

  async function setNumbering(
    owner: TenantWithToken,
    series: NumberingSeries,
    value: Record<string, unknown>,
  ) {
    const res = await request(t.http)
      .patch('/api/v1/tenant/settings')
      .set(bearer(owner.token))
      .send({ numbering: { [series]: value } });
    expectSuccess(res);
  }

  /** Takes `count` numbers in a transaction of their own, committed. */
  function reserve(
    tenantId: string,
    issuedOn: string,
    count = 1,
    series: NumberingSeries = 'invoice',
  ): Promise<Taken[]> {
    return t.dataSource.transaction((manager) =>
      numbering.reserve(manager, tenantId, series, count, issuedOn),
    );
  }

  const numbersOf = (taken: Taken[]) => taken.map((one) => one.number);

  async function counters(tenantId: string) {
    return t.dataSource.query<{ series: string; period: number; last_sequence: number }[]>(
      `SELECT series, period, last_sequence FROM document_counters WHERE tenant_id = $1 ORDER BY series, period`,
      [tenantId],
    );
  }

  describe('reserve under concurrency', () => {
    it('should leave the committed numbers gapless, unique and in lock order when 20 transactions race and some roll back', async () => {
      const owner = await tenant();
      const committed: Taken[][] = [];
      const lockOrder: { first: number; committed: boolean }[] = [];
      const rollsBack = (index: number) => index % 4 === 1; // 5 of the 20
      const results = await Promise.allSettled(
        Array.from({ length: 20 }, (_, index) =>
          t.dataSource.transaction(async (manager: EntityManager) => {
            const count = 1 + (index % 3);
            const taken = await numbering.reserve(manager, owner.tenantId, 'invoice', count, '2026-06-15');
            // The next reservation waits for this transaction: the order reserves return in is the lock's.
            const entry = { first: taken[0].sequence, committed: !rollsBack(index) };
            lockOrder.push(entry);
            // A random pause inside the transaction on purpose: the racers commit and roll back in mixed orders.
            await sleep(Math.floor(Math.random() * 8));
            if (rollsBack(index)) {
              throw new RolledBack();
            }
            committed.push(taken);
            return taken;
          }),
        ),
      );
      const failures = results.filter((result) => result.status === 'rejected');
      expect(failures).toHaveLength(5);
      for (const failure of failures) {
        expect(failure.reason).toBeInstanceOf(RolledBack);
      }

      const total = Array.from({ length: 20 }, (_, index) => (rollsBack(index) ? 0 : 1 + (index % 3))).reduce(
        (sum, count) => sum + count,
        0,
      );
      const sequences = committed.flat().map((one) => one.sequence);
      expect([...sequences].sort((a, b) => a - b)).toEqual(Array.from({ length: total }, (_, i) => i + 1));
      for (const taken of committed) {
        // Each transaction's numbers are consecutive, formatted from their sequence.
        expect(taken.map((one) => one.sequence)).toEqual(taken.map((_, i) => taken[0].sequence + i));
        expect(numbersOf(taken)).toEqual(
          taken.map((one) => `INV-2026-${String(one.sequence).padStart(6, '0')}`),
        );
      }
      const committedFirsts = lockOrder.filter((entry) => entry.committed).map((entry) => entry.first);
      expect(committedFirsts).toEqual([...committedFirsts].sort((a, b) => a - b));
      expect(new Set(committedFirsts).size).toBe(committedFirsts.length);
      expect(await counters(owner.tenantId)).toEqual([
        { series: 'invoice', period: 0, last_sequence: total },
      ]);

      // What comes next continues right after.
      expect(numbersOf(await reserve(owner.tenantId, '2026-06-16'))).toEqual([
        `INV-2026-${String(total + 1).padStart(6, '0')}`,
      ]);
    });

    it('should give back the numbers of a transaction that rolls back after taking them', async () => {
      const owner = await tenant();
      expect(numbersOf(await reserve(owner.tenantId, '2026-03-01', 2))).toEqual([
        'INV-2026-000001',
        'INV-2026-000002',
      ]);
      await expect(
        t.dataSource.transaction(async (manager) => {
          expect(
            numbersOf(await numbering.reserve(manager, owner.tenantId, 'invoice', 3, '2026-03-01')),
          ).toEqual(['INV-2026-000003', 'INV-2026-000004', 'INV-2026-000005']);
          throw new RolledBack();
        }),
      ).rejects.toBeInstanceOf(RolledBack);
      expect(await reserve(owner.tenantId, '2026-03-02')).toEqual([
        { sequence: 3, number: 'INV-2026-000003' },
      ]);
    });
  });

  describe('series and formats', () => {
    it('should number with the defaults when the tenant has no settings, each series on its own', async () => {
      const owner = await tenant();
      const other = await tenant();
      expect(await reserve(owner.tenantId, '2026-01-05', 2)).toEqual([
        { sequence: 1, number: 'INV-2026-000001' },
        { sequence: 2, number: 'INV-2026-000002' },
      ]);
      expect(await reserve(owner.tenantId, '2026-01-05', 1, 'credit_note')).toEqual([
        { sequence: 1, number: 'CN-2026-000001' },
      ]);
      // Outside a transaction the lock would not outlive the statement: refused.
      await expect(
        numbering.next(t.dataSource.manager, owner.tenantId, 'invoice', '2026-01-05'),
      ).rejects.toThrow(/needs a transaction/);
      expect(
        await t.dataSource.transaction((manager) =>
          numbering.next(manager, owner.tenantId, 'credit_note', '2026-01-06'),
        ),
      ).toEqual({ sequence: 2, number: 'CN-2026-000002' });
      // Another tenant's series are its own.
      expect(await reserve(other.tenantId, '2026-01-05')).toEqual([
        { sequence: 1, number: 'INV-2026-000001' },
      ]);
    });

    it('should keep the sequence going when the format changes mid-year', async () => {
      const owner = await tenant();
      expect(numbersOf(await reserve(owner.tenantId, '2026-04-30', 2))).toEqual([
        'INV-2026-000001',
        'INV-2026-000002',
      ]);
      await setNumbering(owner, 'invoice', { format: 'FT {YYYY}/{MM}/{seq}' });
      expect(numbersOf(await reserve(owner.tenantId, '2026-05-01', 2))).toEqual([
        'FT 2026/05/3',
        'FT 2026/05/4',
      ]);
      await setNumbering(owner, 'invoice', { format: 'F{YY}-{seq:3}' });
      expect(numbersOf(await reserve(owner.tenantId, '2026-05-02'))).toEqual(['F26-005']);
      // The credit note series was never touched.
      expect(numbersOf(await reserve(owner.tenantId, '2026-05-02', 1, 'credit_note'))).toEqual([
        'CN-2026-000001',
      ]);
    });

    it('should never restart a series without restart_yearly, across a new year too', async () => {
      const owner = await tenant();
      expect(numbersOf(await reserve(owner.tenantId, '2026-12-31', 2))).toEqual([
        'INV-2026-000001',
        'INV-2026-000002',
      ]);
      expect(numbersOf(await reserve(owner.tenantId, '2027-01-01'))).toEqual(['INV-2027-000003']);
    });

    it('should restart at 1 in each new year with restart_yearly, and keep each year its own', async () => {
      const owner = await tenant();
      await setNumbering(owner, 'invoice', { restart_yearly: true });
      expect(numbersOf(await reserve(owner.tenantId, '2026-12-30', 2))).toEqual([
        'INV-2026-000001',
        'INV-2026-000002',
      ]);
      expect(numbersOf(await reserve(owner.tenantId, '2026-12-31'))).toEqual(['INV-2026-000003']);
      expect(await reserve(owner.tenantId, '2027-01-01', 2)).toEqual([
        { sequence: 1, number: 'INV-2027-000001' },
        { sequence: 2, number: 'INV-2027-000002' },
      ]);
      // A document dated in the old year after the new one began continues the old year's sequence.
      expect(numbersOf(await reserve(owner.tenantId, '2026-12-31'))).toEqual(['INV-2026-000004']);
      expect(numbersOf(await reserve(owner.tenantId, '2027-01-02'))).toEqual(['INV-2027-000003']);
      // Rolled back across the boundary: the new year's first number comes back.
      await expect(
        t.dataSource.transaction(async (manager) => {
          await numbering.reserve(manager, owner.tenantId, 'invoice', 1, '2028-01-01');
          throw new RolledBack();
        }),
      ).rejects.toBeInstanceOf(RolledBack);
      expect(numbersOf(await reserve(owner.tenantId, '2028-01-01'))).toEqual(['INV-2028-000001']);
      expect(await counters(owner.tenantId)).toEqual([
        { series: 'invoice', period: 0, last_sequence: 0 },
        { series: 'invoice', period: 2026, last_sequence: 4 },
        { series: 'invoice', period: 2027, last_sequence: 3 },
        { series: 'invoice', period: 2028, last_sequence: 1 },
      ]);
    });

    it('should never repeat a number of the year when the yearly restart is turned on or off mid-year', async () => {
      const owner = await tenant();
      const issued: string[] = [];
      const take = async (issuedOn: string, count = 1) => {
        const numbers = numbersOf(await reserve(owner.tenantId, issuedOn, count));
        issued.push(...numbers);
        return numbers;
      };
      expect(await take('2026-02-01', 3)).toEqual(['INV-2026-000001', 'INV-2026-000002', 'INV-2026-000003']);
      await setNumbering(owner, 'invoice', { restart_yearly: true });
      // 2026 already has 1–3 from the never-restarting counter: the yearly one goes on after them …
      expect(await take('2026-06-01')).toEqual(['INV-2026-000004']);
      // … and the next year starts at 1.
      expect(await take('2027-01-10', 2)).toEqual(['INV-2027-000001', 'INV-2027-000002']);
      await setNumbering(owner, 'invoice', { restart_yearly: false });
      expect(await take('2027-03-01')).toEqual(['INV-2027-000004']);
      await setNumbering(owner, 'invoice', { restart_yearly: true });
      expect(await take('2027-04-01')).toEqual(['INV-2027-000005']);
      expect(await take('2028-01-01')).toEqual(['INV-2028-000001']);
      expect(new Set(issued).size).toBe(issued.length);
    });
  });

  describe('arguments', () => {
    it('should take nothing for a count of 0 and refuse a bad count, date or series', async () => {
      const owner = await tenant();
      expect(await reserve(owner.tenantId, '2026-01-01', 0)).toEqual([]);
      await expect(reserve(owner.tenantId, '2026-01-01', -1)).rejects.toThrow(RangeError);
      await expect(reserve(owner.tenantId, '2026-01-01', 1.5)).rejects.toThrow(RangeError);
      await expect(reserve(owner.tenantId, '2026-02-30')).rejects.toThrow(RangeError);
      await expect(reserve(owner.tenantId, '26-01-01')).rejects.toThrow(RangeError);
      await expect(reserve(owner.tenantId, '2026-01-01', 1, 'receipt' as NumberingSeries)).rejects.toThrow(
        RangeError,
      );
      expect(await counters(owner.tenantId)).toEqual([]);
    });
  });
});
