import { Logger } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import type { FeesService, SweepRequest } from '../billing';
import type { Clock } from '../common/clock';
import type { AppConfig } from '../config/app-config';
import type { Tx, TransactionRunner } from '../database/transaction-runner';
import type { EventsRepository, LogEvent } from '../events';
import { SuspensionReason } from '../subscribers';
import type { AutomationRepository } from './automation.repository';
import { FeeRules } from './fee-rules';

const TX = { manager: {} } as Tx;

const statusChanged = (from: string, to: string, type = 'subscriber.status_changed'): LogEvent => ({
  txId: '7',
  id: 'evt_1',
  tenantId: 'ten_1',
  type,
  subjectId: 'sub_1',
  data: { object: {}, from, to },
});

interface Fakes {
  suspension?: { id: string; reason: string | null } | null;
  due?: { tenantId: string; subscriberId: string; invoiceId: string }[];
  disabled?: string[];
  failing?: string[];
}

function feeRules(fakes: Fakes = {}) {
  const charged: unknown[][] = [];
  const requests: SweepRequest[] = [];
  const fees = {
    chargeReconnectionFee: (...args: unknown[]) => {
      charged.push(['reconnection', ...args.slice(1)]);
      return Promise.resolve(null);
    },
    lateFeesDue: (_manager: unknown, request: SweepRequest) => {
      requests.push(request);
      return Promise.resolve({ items: fakes.due ?? [], next: { dueDate: '2026-03-01', id: 'inv_last' } });
    },
    chargeLateFee: (_tx: Tx, tenantId: string, subscriberId: string, invoiceId: string, today: string) => {
      if (fakes.failing?.includes(invoiceId)) {
        return Promise.reject(new Error('lock timeout'));
      }
      charged.push(['late', tenantId, subscriberId, invoiceId, today]);
      return Promise.resolve(null);
    },
  } as unknown as FeesService;
  const eventLog = {
    suspensionBefore: () => Promise.resolve(fakes.suspension ?? null),
  } as unknown as EventsRepository;
  const automation = {
    ruleOn: () => () => 'true',
    disabled: () => Promise.resolve(new Set(fakes.disabled ?? [])),
  } as unknown as AutomationRepository;
  const runner = {
    run: (_scope: unknown, work: (tx: Tx) => Promise<unknown>) => work(TX),
  } as TransactionRunner;
  const clock = { today: () => '2026-03-20' } as Clock;
  const config = { automation: { sweepPageSize: 100 } } as AppConfig;
  const rules = new FeeRules(
    config,
    { manager: {} } as DataSource,
    clock,
    runner,
    automation,
    eventLog,
    fees,
  );
  return { rules, charged, requests };
}

describe('reconnection_fee', () => {
  it('should charge the fee when a suspension for non-payment ends, naming that suspension', async () => {
    const { rules, charged } = feeRules({
      suspension: { id: 'evt_susp', reason: SuspensionReason.NonPayment },
    });
    await rules.reconnected(TX, statusChanged('suspended', 'active'), 'sub_1');
    expect(charged).toEqual([['reconnection', 'ten_1', 'sub_1', 'evt_susp']]);
  });

  it('should charge nothing when the suspension was manual, for fraud, or not found', async () => {
    for (const suspension of [
      { id: 'evt_susp', reason: SuspensionReason.Manual },
      { id: 'evt_susp', reason: SuspensionReason.Fraud },
      { id: 'evt_susp', reason: null },
      null,
    ]) {
      const { rules, charged } = feeRules({ suspension });
      await rules.reconnected(TX, statusChanged('suspended', 'active'), 'sub_1');
      expect(charged).toEqual([]);
    }
  });

  it('should charge nothing for any other move', async () => {
    const { rules, charged } = feeRules({
      suspension: { id: 'evt_susp', reason: SuspensionReason.NonPayment },
    });
    await rules.reconnected(TX, statusChanged('active', 'suspended'), 'sub_1');
    await rules.reconnected(TX, statusChanged('suspended', 'cancelled'), 'sub_1');
    await rules.reconnected(TX, statusChanged('pending', 'active'), 'sub_1');
    await rules.reconnected(TX, statusChanged('suspended', 'active', 'subscriber.updated'), 'sub_1');
    expect(charged).toEqual([]);
  });
});

describe('late_fee sweep', () => {
  const due = [
    { tenantId: 'ten_1', subscriberId: 'sub_1', invoiceId: 'inv_1' },
    { tenantId: 'ten_2', subscriberId: 'sub_2', invoiceId: 'inv_2' },
    { tenantId: 'ten_1', subscriberId: 'sub_3', invoiceId: 'inv_3' },
  ];

  beforeEach(() => jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined));
  afterEach(() => jest.restoreAllMocks());

  it("should charge each invoice found due today, then resume after the pass's last", async () => {
    const { rules, charged, requests } = feeRules({ due });
    await rules.sweepLateFees();
    expect(charged).toEqual([
      ['late', 'ten_1', 'sub_1', 'inv_1', '2026-03-20'],
      ['late', 'ten_2', 'sub_2', 'inv_2', '2026-03-20'],
      ['late', 'ten_1', 'sub_3', 'inv_3', '2026-03-20'],
    ]);
    await rules.sweepLateFees();
    expect(requests.map((request) => [request.today, request.from, request.pageSize])).toEqual([
      ['2026-03-20', null, 100],
      ['2026-03-20', { dueDate: '2026-03-01', id: 'inv_last' }, 100],
    ]);
  });

  it('should skip the tenants that turned the rule off since the read', async () => {
    const { rules, charged } = feeRules({ due, disabled: ['ten_1/late_fee', 'ten_2/overdue_invoices'] });
    await rules.sweepLateFees();
    expect(charged).toEqual([['late', 'ten_2', 'sub_2', 'inv_2', '2026-03-20']]);
  });

  it('should go on past an invoice whose fee failed, and say so in the log', async () => {
    const { rules, charged } = feeRules({ due, failing: ['inv_2'] });
    await rules.sweepLateFees();
    expect(charged.map((each) => each[3])).toEqual(['inv_1', 'inv_3']);
    expect(Logger.prototype.warn).toHaveBeenCalledWith({
      msg: 'late fee failed',
      invoice_id: 'inv_2',
      err: 'lock timeout',
    });
  });
});
