import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import request from 'supertest';
import { expectList } from '../support/envelope';
import { bearer } from '../support/factories';
import { suiteDatabaseUrl } from '../support/server-process';
import { type DataSeen, type ReceivedMail, SmtpReceiver } from '../support/smtp-receiver';
import { createSubscriber, uniqueEmail } from '../support/subscriber-factory';
import { createTenantWithToken, ensure, uniqueSlug } from '../support/test-app';
import { letTimePass, waitFor, waitUntil } from '../support/wait-for';
import { type CrashServer, startCrashServer } from './support/crash-server';
import { recordSecrets } from './support/log-capture';

const SCOPES = ['subscribers:*', 'billing:*', 'notifications:read'];
/** How long the receiver holds its reply to DATA while the sender is killed. */
const HOLD_MS = 3000;

interface NotificationBody {
  id: string;
  kind: string;
  status: string;
  recipient: string | null;
  message_id: string | null;
  attempts: number;
  attempt_log: { attempt: number; outcome: string }[];
}

/**
 * Poll every 100 ms; two sends at once per process, as many as its connection pool to one server holds, so a claimed
 * notification goes out at once and never waits for a connection. The lease (10 s) outlives a send, even one whose
 * reply is held HOLD_MS on a loaded machine, so a live process' send is never taken over; a killed one's is, once
 * its lease ends.
 */
const ENV = {
  NOTIFICATION_POLL_MS: '100',
  NOTIFICATION_CONCURRENCY: '2',
  NOTIFICATION_LEASE_MS: '10000',
};

/** The rows of Linux' TCP tables (/proc/net/tcp*): local and remote `addr:port` in hex, and the socket's inode. */
function tcpRows(): { local: string; remote: string; inode: string }[] {
  return ['/proc/net/tcp', '/proc/net/tcp6'].flatMap((table) => {
    try {
      return readFileSync(table, 'utf8')
        .split('\n')
        .slice(1)
        .map((row) => row.trim().split(/\s+/))
        .map((columns) => ({ local: columns[1] ?? '', remote: columns[2] ?? '', inode: columns[9] ?? '' }));
    } catch {
      return [];
    }
  });
}

/**
 * The process among `pids` holding the client end of the open connection from local port `clientPort` to the
 * receiver's `serverPort` (what the receiver knows as session.remotePort), read from /proc; null when none does.
 */
function ownerOfConnection(clientPort: number, serverPort: number, pids: number[]): number | null {
  const hex = (port: number) => `:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  const sockets = new Set(
    tcpRows()
      .filter((row) => row.local.endsWith(hex(clientPort)) && row.remote.endsWith(hex(serverPort)))
      .map((row) => `socket:[${row.inode}]`),
  );
  for (const pid of pids) {
    for (const fd of readdirSync(`/proc/${pid}/fd`)) {
      try {
        if (sockets.has(readlinkSync(`/proc/${pid}/fd/${fd}`))) {
          return pid;
        }
      } catch {
        // closed meanwhile
      }
    }
  }
  return null;
}

/** A tenant with `count` subscribers, each with an email and an open invoice (one invoice_issued notification). */
async function invoicedSubscribers(
  servers: CrashServer[],
  count: number,
): Promise<{ token: string; emails: string[] }> {
  const { token } = await createTenantWithToken(servers[0].url, SCOPES, uniqueSlug('ntf-crash'));
  recordSecrets(token);
  const emails = Array.from({ length: count }, () => uniqueEmail());
  await Promise.all(
    emails.map(async (email, i) => {
      const url = servers[i % servers.length].url;
      const subscriber = await createSubscriber(url, token, { email, full_name: `Crash ${i}` });
      const res = await request(url)
        .post('/api/v1/invoices')
        .set(bearer(token))
        .send({
          subscriber_id: subscriber.id,
          currency: 'USD',
          due_date: '2099-12-31',
          lines: [{ description: 'Fiber 500', quantity: 1, unit_amount: 1000 + i }],
        });
      ensure(res, 201, `invoice ${i}`);
    }),
  );
  return { token, emails };
}

/**
 * Waits until the tenant has as many invoice_issued notifications as `emails` and none is queued; answers them. On
 * timeout the message says which Message-IDs the receiver was sent more than once (a lease that did not hold).
 */
function settledNotifications(
  url: string,
  token: string,
  emails: string[],
  receiver: SmtpReceiver,
): Promise<NotificationBody[]> {
  return waitUntil(
    async () => {
      const res = await request(url)
        .get('/api/v1/notifications?kind=invoice_issued&limit=100')
        .set(bearer(token));
      expectList(res);
      return res.body.data as NotificationBody[];
    },
    (list) => list.length === emails.length && list.every((each) => each.status !== 'queued'),
    { timeout: 40_000, interval: 100, what: `${emails.length} settled invoice_issued notifications` },
  ).catch((error: Error) => {
    const sends = new Map<string, number>();
    for (const seen of dataTo(receiver, emails)) {
      sends.set(String(seen.messageId), (sends.get(String(seen.messageId)) ?? 0) + 1);
    }
    const repeated = [...sends].filter(([, count]) => count > 1);
    throw new Error(`${error.message}; sent more than once: ${JSON.stringify(repeated)}`);
  });
}

/**
 * One sending per notification: each is `sent` after exactly one recorded attempt, and the receiver accepted exactly
 * one message per notification, to its recipient with its Message-ID. Answers the accepted messages.
 */
function expectSentOnce(
  notifications: NotificationBody[],
  emails: string[],
  receiver: SmtpReceiver,
): ReceivedMail[] {
  expect(notifications.map((each) => each.status)).toEqual(Array(emails.length).fill('sent'));
  expect(notifications.map((each) => each.attempt_log.map((attempt) => attempt.outcome))).toEqual(
    Array(emails.length).fill(['sent']),
  );
  const ours = new Set(emails);
  const accepted = receiver.received.filter((mail) => mail.envelopeTo.some((to) => ours.has(to)));
  expect(accepted.map((mail) => mail.envelopeTo.join()).sort()).toEqual([...emails].sort());
  expect(accepted.map((mail) => mail.messageId).sort()).toEqual(
    notifications.map((each) => each.message_id).sort(),
  );
  expect(new Set(accepted.map((mail) => mail.messageId)).size).toBe(emails.length);
  for (const notification of notifications) {
    const mail = accepted.find((each) => each.envelopeTo.includes(notification.recipient ?? ''));
    expect(mail?.messageId).toBe(notification.message_id);
  }
  return accepted;
}

/** The DATAs the receiver was sent for these recipients, accepted or not. */
function dataTo(receiver: SmtpReceiver, emails: string[]): DataSeen[] {
  const ours = new Set(emails);
  return receiver.data.filter((seen) => seen.to.some((to) => ours.has(to)));
}

/**
 * Issue 31: "one sending per notification across instances and crashes". Two server processes on one Postgres share
 * the queue (FOR UPDATE SKIP LOCKED and a lease); a process killed with SIGKILL while its messages wait for the
 * server's reply to DATA leaves them unaccepted (the receiver, like a real server, drops a message whose client went
 * away before the reply) and leased; once the lease ends the other process sends them again, with the same Message-ID.
 */
describe('Notification sending across instances and a crash', () => {
  let receiver: SmtpReceiver;
  let first: CrashServer;
  let second: CrashServer;
  /** Which process each connection to the receiver came from (by its client port), learnt while it was open. */
  const owners = new Map<number, number>();
  const ownerOf = (clientPort: number): number | null => {
    if (!owners.has(clientPort)) {
      const live = [first, second].filter((server) => server.running()).map((server) => server.child.pid!);
      const owner = ownerOfConnection(clientPort, receiver.port, live);
      if (owner !== null) {
        owners.set(clientPort, owner);
      }
    }
    return owners.get(clientPort) ?? null;
  };

  beforeAll(async () => {
    receiver = await SmtpReceiver.start();
    const env = { ...receiver.env, ...ENV };
    const db = { kind: 'postgres', url: suiteDatabaseUrl() } as const;
    [first, second] = await Promise.all([
      startCrashServer(db, 'notification-crash-a', env),
      startCrashServer(db, 'notification-crash-b', env),
    ]);
  }, 90_000);
  afterAll(async () => {
    await Promise.all([first?.stop('SIGKILL'), second?.stop('SIGTERM')]);
    await receiver?.close();
  });

  it('should send each notification exactly once when two processes share the queue', async () => {
    // Each reply to DATA takes a little while, so neither process can drain the queue alone before the other looks.
    receiver.holdMs = 100;
    const { token, emails } = await invoicedSubscribers([first, second], 30);

    const notifications = await settledNotifications(second.url, token, emails, receiver);
    const accepted = expectSentOnce(notifications, emails, receiver);
    // Not even an unaccepted second try: the receiver was sent one DATA per notification.
    expect(dataTo(receiver, emails)).toHaveLength(emails.length);
    // Both processes sent some: the connections the messages came over (pooled, still open) belong to both.
    const senders = new Set(accepted.map((mail) => ownerOf(mail.clientPort)));
    expect([...senders].sort()).toEqual([first.child.pid, second.child.pid].sort());
  }, 60_000);

  it('should send again, once and with the same Message-ID, what a process killed mid-send never got accepted', async () => {
    receiver.holdMs = HOLD_MS;
    const { token, emails } = await invoicedSubscribers([first, second], 8);

    // The first process' sends have handed over their whole message and wait for the reply: kill it there.
    const fromFirst = () =>
      dataTo(receiver, emails).filter((seen) => ownerOf(seen.clientPort) === first.child.pid);
    const seenBeforeKill = await waitFor(() => (fromFirst().length > 0 ? fromFirst() : null), {
      timeout: 20_000,
      interval: 10,
      what: 'a message of the first process in DATA',
    });
    expect(await first.stop('SIGKILL')).toBe('SIGKILL');
    const killedAt = Date.now();
    receiver.holdMs = 0;

    // The second process takes them over once their lease ends (and sends the rest meanwhile).
    const notifications = await settledNotifications(second.url, token, emails, receiver);
    // The held replies come due HOLD_MS after they were held; by then the receiver has dropped the killed ones.
    await letTimePass(Math.max(0, killedAt + HOLD_MS + 200 - Date.now()));
    const accepted = expectSentOnce(notifications, emails, receiver);

    // What the first process sent: every DATA not over one of the second's connections (still open, pooled).
    const held = dataTo(receiver, emails).filter((seen) => ownerOf(seen.clientPort) !== second.child.pid);
    const heldIds = held.map((seen) => seen.messageId);
    expect(heldIds).toEqual(expect.arrayContaining(seenBeforeKill.map((seen) => seen.messageId)));
    expect(heldIds.every((id) => /^<ntf_[0-9A-Z]{26}@isp\.example>$/.test(id ?? ''))).toBe(true);
    // The killed connections' messages were never accepted; each was sent again once, by the second process, with
    // the Message-ID it first went out with, which is its notification's.
    expect(held.map((seen) => seen.accepted)).toEqual(held.map(() => false));
    for (const id of heldIds) {
      const resent = accepted.filter((mail) => mail.messageId === id);
      expect(resent).toHaveLength(1);
      expect(ownerOf(resent[0].clientPort)).toBe(second.child.pid);
      const notification = notifications.find((each) => each.recipient === resent[0].envelopeTo[0]);
      expect(notification?.message_id).toBe(id);
      expect(dataTo(receiver, resent[0].envelopeTo).map((seen) => seen.messageId)).toEqual([id, id]);
    }
    // Every other notification went out once.
    expect(dataTo(receiver, emails)).toHaveLength(emails.length + held.length);
  }, 60_000);
});
