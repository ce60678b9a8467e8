import type { DataSource } from 'typeorm';
import type { Clock } from '../../common/clock';
import type { AppConfig } from '../../config/app-config';
import type { TransactionRunner } from '../../database/transaction-runner';
import type { EventsService } from '../../events';
import type { MailSender } from '../mail/mail-sender';
import { Notification, NotificationStatus } from '../notification.entity';
import type { NotificationsRepository } from '../notifications.repository';
import type { MailChannel, NotificationContent } from './notification-content';
import { NotificationWorker } from './notification-worker';

const LEASE = new Date('2026-12-03T10:00:00.000Z');

function queued(id: string): Notification {
  return Object.assign(new Notification(), {
    tenantId: 'ten_1',
    id,
    kind: 'payment_received',
    subscriberId: 'sub_1',
    eventId: `evt_${id}`,
    eventType: 'transaction.created',
    status: NotificationStatus.Queued,
    attempts: 0,
    lockedUntil: LEASE,
  });
}

/** A worker over fakes: what it claims, how the tenant's mail goes out; every call recorded. */
function worker(claimed: Notification[], channel: MailChannel | string) {
  const manager = { name: 'the pool' };
  const notifications = {
    claim: jest.fn().mockResolvedValueOnce(claimed).mockResolvedValue([]),
    finish: jest.fn().mockResolvedValue({ now: LEASE, nextAttemptAt: null }),
    reserveSend: jest.fn().mockResolvedValue(true),
    insertAttempt: jest.fn(),
  };
  const events = {
    find: jest.fn().mockResolvedValue({ id: 'evt', data: { object: {} } }),
    append: jest.fn(),
  };
  const content = {
    channel: jest.fn().mockResolvedValue(channel),
    prepare: jest.fn().mockResolvedValue({ skip: 'no_email', subscriberId: 'sub_1', recipient: null }),
  };
  const transactionRunner = {
    run: jest.fn((_scope: unknown, work: (tx: object) => Promise<unknown>) =>
      work({ manager: { name: 'tx' } }),
    ),
  };
  const config = {
    notifications: {
      workerEnabled: false,
      concurrency: 10,
      leaseMs: 60_000,
      ratePerMinute: 60,
      retryDelaysS: [],
    },
    mailAllowPrivate: false,
  };
  const subject = new NotificationWorker(
    { manager } as unknown as DataSource,
    config as unknown as AppConfig,
    transactionRunner as unknown as TransactionRunner,
    events as unknown as EventsService,
    notifications as unknown as NotificationsRepository,
    content as unknown as NotificationContent,
    { send: jest.fn() } as unknown as MailSender,
    { now: () => LEASE } as unknown as Clock,
  );
  const pass = () => (subject as unknown as { pass(): Promise<void> }).pass();
  return { pass, manager, notifications, events, content, transactionRunner };
}

describe('NotificationWorker', () => {
  it("should skip a tenant's notifications on its settings alone: no event read, one statement each", async () => {
    const { pass, manager, notifications, events, content, transactionRunner } = worker(
      [queued('ntf_1'), queued('ntf_2')],
      'no_mail_server',
    );
    await pass();
    expect(content.channel).toHaveBeenCalledTimes(2);
    expect(events.find).not.toHaveBeenCalled();
    expect(content.prepare).not.toHaveBeenCalled();
    expect(transactionRunner.run).not.toHaveBeenCalled();
    expect(notifications.finish).toHaveBeenCalledTimes(2);
    for (const [on, notification, outcome] of notifications.finish.mock.calls) {
      expect(on).toBe(manager);
      expect(notification.lockedUntil).toBe(LEASE);
      expect(outcome).toMatchObject({ status: 'skipped', reason: 'no_mail_server', subscriberId: 'sub_1' });
    }
  });

  it('should read the event and build the message through the channel when the tenant sends', async () => {
    const channel = { mailing: {}, server: {} } as MailChannel;
    const { pass, manager, notifications, events, content, transactionRunner } = worker(
      [queued('ntf_3')],
      channel,
    );
    await pass();
    expect(events.find).toHaveBeenCalledWith('ten_1', 'evt_ntf_3');
    expect(content.prepare).toHaveBeenCalledWith(manager, expect.objectContaining({ id: 'ntf_3' }), channel);
    // prepare skipped it (no_email): still the row alone, outside a transaction.
    expect(transactionRunner.run).not.toHaveBeenCalled();
    expect(notifications.finish).toHaveBeenCalledWith(
      manager,
      expect.objectContaining({ id: 'ntf_3' }),
      expect.objectContaining({ status: 'skipped', reason: 'no_email' }),
    );
  });
});
