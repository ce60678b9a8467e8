import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import request from 'supertest';
import { expectList } from './support/envelope';
import { bearer } from './support/factories';
import { BOOTSTRAP_TOKEN, uniqueSlug } from './support/test-app';
import {
  createWebhook,
  deleteAllWebhooks,
  eventually,
  listAttempts,
  WebhookReceiver,
} from './support/webhook-receiver';

const ROOT = join(__dirname, '..');
const LISTENING = /listening on (http:\/\/\S+)/;
const SUBSCRIBERS = 30;

interface ServerChild {
  url: string;
  child: ChildProcess;
  /** Resolves once the process has gone, with its signal (or exit code). */
  exited: Promise<string>;
}

/**
 * `src/main.ts` in its own Node process on the suite's database (DATABASE_URL, the embedded one of global-setup or
 * a real server), so it can be killed with SIGKILL. Resolves once it answers /health/live.
 */
function startServer(env: Record<string, string>): Promise<ServerChild> {
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) {
    throw new Error('DATABASE_URL is not set: the global setup provides it');
  }
  const child = spawn(
    process.execPath,
    ['-r', 'ts-node/register/transpile-only', join(ROOT, 'src', 'main.ts')],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        DATABASE_URL: databaseUrl,
        PORT: '0',
        LOG_LEVEL: 'silent',
        API_BOOTSTRAP_TOKEN: BOOTSTRAP_TOKEN,
        RATE_LIMIT_MAX: '1000000',
        ABUSE_AUTH_FAILURES_MAX: '1000000',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<string>((resolve) =>
    child.once('exit', (code, signal) => resolve(signal ?? String(code))),
  );
  return new Promise<ServerChild>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const match = LISTENING.exec(stdout);
      if (!match) {
        return;
      }
      child.stdout?.removeAllListeners('data');
      child.stdout?.resume();
      const server = { url: match[1], child, exited };
      request(server.url)
        .get('/health/live')
        .then(() => resolve(server), reject);
    });
    void exited.then((how) =>
      reject(new Error(`server ended (${how}) before listening: ${stderr.trim() || stdout.trim()}`)),
    );
  });
}

async function stop(server: ServerChild | undefined, signal: NodeJS.Signals): Promise<string | undefined> {
  if (!server) {
    return undefined;
  }
  if (server.child.exitCode === null && server.child.signalCode === null) {
    server.child.kill(signal);
  }
  return server.exited;
}

/**
 * A worker killed with SIGKILL in the middle of a backlog leaves deliveries claimed (leased) and pending. A new
 * process on the same database must deliver every event at least once: the pending ones at once, the leased ones
 * when their lease (WEBHOOK_TIMEOUT_MS + a margin) runs out.
 */
describe('Webhook delivery across a crash', () => {
  const env = {
    WEBHOOK_ALLOW_PRIVATE: 'true',
    WEBHOOK_ALLOW_INSECURE: 'true',
    WEBHOOK_POLL_MS: '100',
    WEBHOOK_TIMEOUT_MS: '1000',
    WEBHOOK_RETRY_DELAYS_S: '0.2,0.2,0.2',
    // Two at a time against a receiver that takes 300 ms: a backlog of about 4.5 s builds up.
    WEBHOOK_CONCURRENCY: '2',
  };
  let first: ServerChild | undefined;
  let second: ServerChild | undefined;
  let receiver: WebhookReceiver;
  let token: string | undefined;

  beforeAll(async () => {
    receiver = await WebhookReceiver.start({ fallback: { status: 200, delayMs: 300 } });
  });
  afterAll(async () => {
    if (second && token) {
      await deleteAllWebhooks(second.url, token);
    }
    await stop(first, 'SIGKILL');
    await stop(second, 'SIGTERM');
    await receiver?.close();
  });

  it('should deliver every event at least once after the worker is killed with SIGKILL and restarted', async () => {
    first = await startServer(env);
    const slug = uniqueSlug('crash');
    await request(first.url)
      .post('/api/v1/tenants')
      .set(bearer(BOOTSTRAP_TOKEN))
      .send({ slug, name: `Tenant ${slug}` })
      .expect(201);
    const issued = await request(first.url)
      .post('/api/v1/tokens')
      .set(bearer(BOOTSTRAP_TOKEN))
      .send({ tenant: slug, name: 'crash test', scopes: ['admin'] })
      .expect(201);
    token = issued.body.data.token as string;
    const hook = await createWebhook(first.url, token, { url: receiver.url, events: ['subscriber.created'] });

    const created = await Promise.all(
      Array.from({ length: SUBSCRIBERS }, (_, i) =>
        request(first!.url)
          .post('/api/v1/subscribers')
          .set(bearer(token!))
          .send({ full_name: `Backlog ${i}`, status: 'prospect' }),
      ),
    );
    expect(created.map((res) => res.status)).toEqual(Array(SUBSCRIBERS).fill(201));

    await receiver.waitFor(3, 20_000);
    expect(await stop(first, 'SIGKILL')).toBe('SIGKILL');
    // The kill came mid-backlog: most events were still owed, and the requests in flight were never answered.
    const answeredBeforeCrash = receiver.answeredEventIds().size;
    expect(answeredBeforeCrash).toBeLessThan(SUBSCRIBERS);

    second = await startServer(env);
    const events = await request(second.url)
      .get('/api/v1/events?type=subscriber.created&limit=100')
      .set(bearer(token));
    expectList(events);
    const eventIds = (events.body.data as { id: string }[]).map((event) => event.id);
    expect(eventIds).toHaveLength(SUBSCRIBERS);

    // At least once: every event reaches the receiver and gets its answer; duplicates are allowed.
    const owed = () => eventIds.filter((id) => !receiver.answeredEventIds().has(id));
    await eventually(
      () => Promise.resolve(owed().length === 0 ? true : undefined),
      45_000,
      `every event answered by the receiver (${answeredBeforeCrash} were before the kill)`,
    ).catch((error: Error) => {
      throw new Error(`${error.message}; still owed: ${JSON.stringify(owed())}`);
    });
    expect([...receiver.eventIds()].sort()).toEqual([...eventIds].sort());

    // The attempt log shows a successful attempt for every event.
    const delivered = await eventually(
      async () => {
        const log = await listAttempts(second!.url, token!, hook.id);
        const ok = new Set(log.filter((a) => a.status_code === 200).map((a) => a.event_id));
        return eventIds.every((id) => ok.has(id)) ? ok : undefined;
      },
      10_000,
      'a 200 attempt in the log for every event',
    );
    expect(delivered.size).toBe(SUBSCRIBERS);
  }, 120_000);
});
