import { Logger } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { type CollectionsService, Invoice, InvoiceStatus } from '../billing';
import type { Clock } from '../common/clock';
import type { AppConfig } from '../config/app-config';
import type { Tx, TransactionRunner } from '../database/transaction-runner';
import type { EventsService, NewEvent } from '../events';
import type { ChangeStatusDto, SubscribersService } from '../subscribers';
import type { AutomationRepository } from './automation.repository';
import { DunningSweeps } from './dunning-sweeps';

const TODAY = '2026-03-20';
const NOW = new Date(`${TODAY}T06:00:00.000Z`);
const TX = { manager: {} } as Tx;

const invoice = (id: string, dueDate: string): Invoice =>
  Object.assign(new Invoice(), {
    tenantId: 'ten_1',
    id,
    number: `INV-${id}`,
    sequence: 1,
    subscriberId: 'sub_1',
    currency: 'EUR',
    status: InvoiceStatus.Open,
    lines: [],
    total: 3100,
    taxAmount: 0,
    taxes: [],
    amountPaid: 0,
    dueDate,
    finalizedAt: NOW,
    paidAt: null,
    voidedAt: null,
    voidReason: null,
    createdAt: NOW,
    updatedAt: NOW,
  });

interface Fakes {
  overdue?: Invoice[];
  toSuspend?: { tenantId: string; id: string }[];
  reminders?: { invoice: Invoice; offsetDays: number; amountDue: number }[];
  /** Subject keys whose effect was claimed before: no event again. */
  claimed?: string[];
  failingSuspension?: string;
}

function sweeps(fakes: Fakes) {
  const events: NewEvent[] = [];
  const suspended: [string, string, ChangeStatusDto][] = [];
  const claimed = new Set(fakes.claimed);
  const automation = {
    pending: () => () => 'true',
    ruleOn: () => () => 'true',
    claimEffect: (_manager: unknown, effect: { subjectId: string; rule: string }) => {
      const first = !claimed.has(effect.subjectId);
      claimed.add(effect.subjectId);
      return Promise.resolve(first);
    },
  } as unknown as AutomationRepository;
  const next = { dueDate: TODAY, id: 'inv_next' };
  const collections = {
    overdueInvoices: () => Promise.resolve({ items: fakes.overdue ?? [], next }),
    subscribersToSuspend: () => Promise.resolve({ items: fakes.toSuspend ?? [], next: null }),
    dueReminders: () => Promise.resolve({ items: fakes.reminders ?? [], next }),
  } as unknown as CollectionsService;
  const subscribers = {
    changeStatusIn: (_tx: Tx, tenantId: string, id: string, dto: ChangeStatusDto) => {
      if (id === fakes.failingSuspension) {
        return Promise.reject(new Error('lock timeout'));
      }
      suspended.push([tenantId, id, dto]);
      return Promise.resolve({});
    },
  } as unknown as SubscribersService;
  const eventsService = {
    append: (_tx: Tx, event: NewEvent) => {
      events.push(event);
      return Promise.resolve();
    },
  } as unknown as EventsService;
  const runner = {
    run: (_scope: unknown, work: (tx: Tx) => Promise<unknown>) => work(TX),
  } as TransactionRunner;
  const clock = { today: () => TODAY, now: () => NOW } as Clock;
  const config = { automation: { sweepPageSize: 100 } } as AppConfig;
  const dunning = new DunningSweeps(
    config,
    { manager: {} } as DataSource,
    clock,
    runner,
    eventsService,
    automation,
    collections,
    subscribers,
  );
  return { dunning, events, suspended };
}

describe('overdue_invoices', () => {
  beforeEach(() => jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined));
  afterEach(() => jest.restoreAllMocks());

  it('should announce each overdue invoice once, with its days overdue', async () => {
    const { dunning, events } = sweeps({
      overdue: [
        invoice('inv_1', '2026-03-19'),
        invoice('inv_2', '2026-02-28'),
        invoice('inv_3', '2026-03-01'),
      ],
      claimed: ['inv_3'],
    });
    await dunning.sweepOverdue();
    expect(events.map((event) => [event.type, event.subjectId, event.details])).toEqual([
      ['invoice.overdue', 'inv_1', { days_overdue: 1 }],
      ['invoice.overdue', 'inv_2', { days_overdue: 20 }],
    ]);
    expect(events[0].object).toMatchObject({ id: 'inv_1', overdue: true, amount_due: 3100 });
  });

  it('should suspend each subscriber past its grace for non-payment, going on past one that fails', async () => {
    const { dunning, suspended } = sweeps({
      toSuspend: [
        { tenantId: 'ten_1', id: 'sub_1' },
        { tenantId: 'ten_1', id: 'sub_2' },
        { tenantId: 'ten_2', id: 'sub_3' },
      ],
      failingSuspension: 'sub_2',
    });
    await dunning.sweepOverdue();
    expect(suspended).toEqual([
      ['ten_1', 'sub_1', { status: 'suspended', reason: 'non_payment' }],
      ['ten_2', 'sub_3', { status: 'suspended', reason: 'non_payment' }],
    ]);
    expect(Logger.prototype.warn).toHaveBeenCalledWith({
      msg: 'non-payment suspension failed',
      subscriber_id: 'sub_2',
      err: 'lock timeout',
    });
  });
});

describe('invoice_reminders', () => {
  it('should send one reminder per invoice and offset, with the offset and what is still owed', async () => {
    const first = invoice('inv_1', '2026-03-13');
    const { dunning, events } = sweeps({
      reminders: [
        { invoice: first, offsetDays: 7, amountDue: 1100 },
        { invoice: invoice('inv_2', '2026-03-23'), offsetDays: -3, amountDue: 3100 },
        { invoice: first, offsetDays: 0, amountDue: 1100 },
      ],
      claimed: ['inv_1:0'],
    });
    await dunning.sweepReminders();
    expect(events.map((event) => [event.type, event.subjectId, event.details])).toEqual([
      ['invoice.reminder', 'inv_1', { offset_days: 7, amount_due: 1100 }],
      ['invoice.reminder', 'inv_2', { offset_days: -3, amount_due: 3100 }],
    ]);
  });

  it('should not send a reminder twice when the sweep comes back to it', async () => {
    const reminders = [{ invoice: invoice('inv_1', '2026-03-13'), offsetDays: 7, amountDue: 1100 }];
    const { dunning, events } = sweeps({ reminders });
    await dunning.sweepReminders();
    await dunning.sweepReminders();
    expect(events).toHaveLength(1);
  });
});
