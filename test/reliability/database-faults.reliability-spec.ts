import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { bearer } from '../support/factories';
import { planBody, uniquePppoeUsername } from '../support/provisioning-factory';
import { subscriberBody } from '../support/subscriber-factory';
import { uniqueSlug } from '../support/test-app';
import { createWebhook, WebhookReceiver } from '../support/webhook-receiver';
import {
  type FaultCluster,
  type FaultServer,
  freePortIn,
  startFaultCluster,
  startFaultServer,
} from './support/faults-cluster';
import { type Answer, byStatus, describeAnswer, maxMs, Traffic } from './support/faults-traffic';
import { createTenant, type Tenant } from './support/instances-client';
import { recordSecrets } from './support/log-capture';
import { waitFor, waitUntil } from '../support/wait-for';

/**
 * Issue 18 item 4: database faults. `src/main.ts` runs as a child process on a private PostgreSQL cluster this suite
 * starts itself (initdb into a temporary folder, a port of its own; the shared server is never touched), with every
 * background worker on and polling fast: the webhook worker, the provisioning worker on the radius-sql driver, the
 * automation consumer and the bill scheduler. A second server process, with its workers off, reaches the same cluster
 * over its Unix socket instead of TCP: a database that is away fails differently on each (ECONNREFUSED on a port,
 * ENOENT once the socket file is gone). Under steady traffic on both (a few clients creating and reading subscribers,
 * a probe on /health/ready and /health/live), the database is taken away twice:
 *
 * 1. stopped (`pg_ctl stop -m immediate`), then started again on the same data folder;
 * 2. hung: SIGSTOP to the postmaster and every backend (sockets open, nothing answers), then SIGCONT.
 *
 * While it is away every request is answered within the configured acquire + statement timeout and a 3 s margin
 * (none hangs), each either 2xx (served before the fault bit) or `503 service_unavailable` with Retry-After, and every
 * request started and answered inside the outage is a 503; /health/ready answers 503, /health/live 200. Once it is
 * back, without restarting either server, the API answers 2xx again (the recovery time is measured) and each worker
 * does its job once more: an event is delivered to a real receiver through a subscription made before the faults, a
 * provisioning order completes, the automation consumer orders the suspension of a suspended subscriber's service, and
 * the scheduler starts and completes a tenant's bill run of the day. The same checks run once before any fault, so a
 * failure after one is the fault's doing. One summary line gives the figures for docs/reliability.md.
 *
 * Knobs: FAULTS_OUTAGE_MS (how long each fault lasts, default 8000: longer than the answer bound, so a request that
 * hangs for the outage shows), FAULTS_CLIENTS (traffic clients per server, default 3), FAULTS_PG_PORT (the first port
 * tried for the cluster, default 55400; the first free one up to 55499 is used).
 */

const ACQUIRE_TIMEOUT_MS = 1_000;
const STATEMENT_TIMEOUT_MS = 2_000;
/** Bounded, not fast: the machine is shared and small. */
const MARGIN_MS = 3_000;
const ANSWER_BOUND_MS = ACQUIRE_TIMEOUT_MS + STATEMENT_TIMEOUT_MS + MARGIN_MS;
const OUTAGE_MS = Number(process.env.FAULTS_OUTAGE_MS ?? 8_000);
const CLIENTS = Number(process.env.FAULTS_CLIENTS ?? 3);
const PORT_FROM = Number(process.env.FAULTS_PG_PORT ?? 55_400);
const PORT_TO = 55_499;
/** How long the API and the workers get to show they are back. */
const RECOVERY_WAIT_MS = 30_000;
const WORKER_WAIT_MS = 30_000;

const TIMEOUT_ENV: Record<string, string> = {
  DATABASE_POOL_MAX: '10',
  DATABASE_ACQUIRE_TIMEOUT_MS: String(ACQUIRE_TIMEOUT_MS),
  DATABASE_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS),
};

/** The server on TCP: every background worker on, polling every 100 ms; deliveries and orders retried quickly. */
const SERVER_ENV: Record<string, string> = {
  ...TIMEOUT_ENV,
  WEBHOOK_WORKER_ENABLED: 'true',
  WEBHOOK_POLL_MS: '100',
  WEBHOOK_ALLOW_PRIVATE: 'true',
  WEBHOOK_ALLOW_INSECURE: 'true',
  WEBHOOK_RETRY_DELAYS_S: '0.2,0.5,1,2',
  PROVISIONING_WORKER_ENABLED: 'true',
  NETWORK_DRIVER: 'radius-sql',
  PROVISIONING_POLL_MS: '100',
  PROVISIONING_RETRY_DELAYS_S: '0.2,0.5,1',
  AUTOMATION_ENABLED: 'true',
  AUTOMATION_POLL_MS: '100',
  BILLING_SCHEDULER_ENABLED: 'true',
  // Any hour of the day: a tenant's first service makes it due for the day's scheduled run at once.
  BILLING_RUN_HOUR_UTC: '0',
};

/** The server on the Unix socket: the API alone (the workers' recovery is the TCP server's to show). */
const SOCKET_SERVER_ENV: Record<string, string> = {
  ...TIMEOUT_ENV,
  WEBHOOK_WORKER_ENABLED: 'false',
  PROVISIONING_WORKER_ENABLED: 'false',
  AUTOMATION_ENABLED: 'false',
  BILLING_SCHEDULER_ENABLED: 'false',
  // The bill-run worker has no switch of its own and polls at this pace: once at boot, then not within the suite, so
  // the scheduled runs are carried out by the TCP server.
  AUTOMATION_POLL_MS: '3600000',
};

type Fault = 'stop' | 'hang';
type Transport = 'tcp' | 'socket';
const TRANSPORTS: Transport[] = ['tcp', 'socket'];

interface Outage {
  fault: Fault;
  /** Each server's traffic, by how it reaches the database. */
  traffic: Record<Transport, Traffic>;
  /** When the fault was started, when it had taken hold, when it was undone, and when the database was back. */
  faultAt: number;
  faultIn: number;
  restoreAt: number;
  backAt: number;
  /** Each server's first 2xx answered after the database was back. */
  firstOk: Record<Transport, Answer>;
}

interface WorkerTimes {
  webhookMs: number;
  orderMs: number;
  scheduleMs: number;
  automationMs: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Waits until `find` answers something (what the traffic has recorded so far), and answers it. */
const seen = <T>(find: () => T | undefined, what: string): Promise<T> =>
  waitFor(() => Promise.resolve(find()), { timeout: RECOVERY_WAIT_MS, interval: 50, what });
const is2xx = (answer: Answer) => answer.status >= 200 && answer.status < 300 && answer.inEnvelope;
const isUnavailable = (answer: Answer) =>
  answer.status === 503 &&
  answer.code === 'service_unavailable' &&
  answer.inEnvelope &&
  Number(answer.retryAfter) > 0;

describe('Database faults: a stopped or hung database answers 503 in bounded time, and everything resumes', () => {
  let receiver: WebhookReceiver;
  let cluster: FaultCluster;
  /** The server on TCP, with every worker; the one the recovery checks talk to. */
  let server: FaultServer;
  let servers: Partial<Record<Transport, FaultServer>> = {};
  const pids: Partial<Record<Transport, number>> = {};
  /** The tenant the traffic runs as. */
  let trafficToken: string;
  /** A tenant whose webhook subscription is made before any fault. */
  let probe: { token: string };
  let running: Traffic[] = [];
  const outages: Partial<Record<Fault, Outage>> = {};
  const workers: Record<string, WorkerTimes> = {};

  /** A fresh tenant and an admin token of it, through the bootstrap token. */
  function newTenant(prefix: string): Promise<Tenant> {
    return createTenant(server.url, uniqueSlug(prefix));
  }

  /** POSTs `body` and answers `data`, failing with the answer unless its status is `status`. */
  async function post<T>(token: string, path: string, body: object, status: number): Promise<T> {
    const res = await request(server.url).post(path).set(bearer(token)).send(body);
    if (res.status !== status) {
      throw new Error(`POST ${path}: ${res.status} ${JSON.stringify(res.body)}`);
    }
    return res.body.data as T;
  }

  async function getData<T>(token: string, path: string): Promise<T> {
    const res = await request(server.url).get(path).set(bearer(token));
    if (res.status !== 200) {
      throw new Error(`GET ${path}: ${res.status} ${JSON.stringify(res.body)}`);
    }
    return res.body.data as T;
  }

  /** Polls `read` until `done` holds for what it answers (API errors are retried), and answers it. */
  function until<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
    return waitUntil(read, done, { timeout: WORKER_WAIT_MS, interval: 50, what });
  }

  /**
   * Each background worker does its job once, from now: the webhook worker delivers a new subscriber.created event
   * through the probe tenant's subscription; for a tenant made now, the provisioning worker completes a service's
   * activation, the scheduler starts and completes the tenant's bill run of the day (its first service makes it due),
   * and the automation consumer answers the subscriber's suspension with a suspend order, which completes.
   */
  async function workersResume(): Promise<WorkerTimes> {
    const started = Date.now();
    const since = () => Date.now() - started;

    const announced = await post<{ id: string }>(probe.token, '/api/v1/subscribers', subscriberBody(), 201);
    const webhook = receiver
      .waitFor(
        1,
        WORKER_WAIT_MS,
        (req) => req.body?.type === 'subscriber.created' && req.body.data.object.id === announced.id,
      )
      .then(since);

    const tenant = await newTenant('faults-x');
    const plan = await post<{ id: string }>(tenant.token, '/api/v1/service-plans', planBody(), 201);
    const subscriber = await post<{ id: string }>(
      tenant.token,
      '/api/v1/subscribers',
      subscriberBody({ status: 'active' }),
      201,
    );
    const password = `pw-${randomBytes(12).toString('hex')}`;
    recordSecrets(password);
    const { service, order } = await post<{ service: { id: string }; order: { id: string } }>(
      tenant.token,
      `/api/v1/subscribers/${subscriber.id}/services`,
      { plan_id: plan.id, pppoe_username: uniquePppoeUsername('faults'), pppoe_password: password },
      202,
    );
    type Order = { id: string; action: string; status: string; last_error: string | null };
    const settled = (o: Order) => ['completed', 'failed', 'cancelled'].includes(o.status);
    const activation = await until(
      `activation order ${order.id} settled`,
      () => getData<Order>(tenant.token, `/api/v1/provisioning-orders/${order.id}`),
      settled,
    );
    expect({ action: activation.action, status: activation.status }).toEqual({
      action: 'activate',
      status: 'completed',
    });
    const orderMs = since();

    type Run = { id: string; trigger: string; status: string; errors: unknown[] };
    const runs = await until(
      'a scheduled bill run of the new tenant, settled',
      () => getData<Run[]>(tenant.token, '/api/v1/billing-runs?limit=10'),
      (list) => list.some((run) => run.trigger === 'schedule' && run.status !== 'running'),
    );
    expect(runs.filter((run) => run.trigger === 'schedule').map((run) => run.status)).toEqual(['completed']);
    const scheduleMs = since();

    await post(
      tenant.token,
      `/api/v1/subscribers/${subscriber.id}/status`,
      { status: 'suspended', reason: 'manual' },
      200,
    );
    const orders = await until(
      `a settled suspend order for service ${service.id}`,
      () => getData<Order[]>(tenant.token, `/api/v1/provisioning-orders?service_id=${service.id}&limit=10`),
      (list) => list.some((o) => o.action === 'suspend' && settled(o)),
    );
    expect(orders.filter((o) => o.action === 'suspend').map((o) => o.status)).toEqual(['completed']);
    const automationMs = since();

    return { webhookMs: await webhook, orderMs, scheduleMs, automationMs };
  }

  async function startFault(fault: Fault): Promise<void> {
    if (fault === 'stop') {
      await cluster.stop('immediate');
    } else {
      cluster.freeze();
    }
  }

  async function undoFault(fault: Fault): Promise<void> {
    if (fault === 'stop') {
      await cluster.start();
    } else {
      cluster.thaw();
    }
  }

  /**
   * Steady traffic on both servers, then the fault for OUTAGE_MS, then the database back; waits for each server's
   * first 2xx and a ready probe answered 200 after it, and stops the traffic. The fault is always undone, whatever
   * happens meanwhile.
   */
  async function runOutage(fault: Fault): Promise<Outage> {
    const traffic = {} as Record<Transport, Traffic>;
    for (const via of TRANSPORTS) {
      traffic[via] = new Traffic(servers[via]!.url, trafficToken, {
        clients: CLIENTS,
        deadlineMs: OUTAGE_MS + 20_000,
        probeEveryMs: 200,
        pauseAfterFailureMs: 50,
      });
    }
    running = Object.values(traffic);
    running.forEach((each) => each.start());
    try {
      await seen(
        () => (running.every((each) => each.of().filter(is2xx).length >= 10) ? true : undefined),
        'steady traffic on both servers before the fault',
      );
      const faultAt = Date.now();
      let faultIn = faultAt;
      let restoreAt = faultAt;
      try {
        await startFault(fault);
        faultIn = Date.now();
        await sleep(OUTAGE_MS);
      } finally {
        restoreAt = Date.now();
        await undoFault(fault);
      }
      const backAt = Date.now();
      const firstOk = {} as Record<Transport, Answer>;
      for (const via of TRANSPORTS) {
        firstOk[via] = await seen(
          () => traffic[via].of().find((answer) => is2xx(answer) && answer.endedAt >= backAt),
          `a 2xx answer from the ${via} server after the database came back`,
        );
        await seen(
          () =>
            traffic[via].of(['ready']).find((answer) => answer.status === 200 && answer.startedAt >= backAt),
          `/health/ready 200 from the ${via} server after the database came back`,
        );
      }
      return { fault, traffic, faultAt, faultIn, restoreAt, backAt, firstOk };
    } finally {
      await Promise.all(running.map((each) => each.stop()));
      running = [];
    }
  }

  /** Everything item 4 asks of the answers both servers gave while the database was away. */
  function expectBoundedAnswers(outage: Outage): void {
    const { faultAt, faultIn, restoreAt } = outage;
    /** The answers `pick` selects from each server's traffic, as readable lines (the first 20). */
    const lines = (pick: (traffic: Traffic) => Answer[]) =>
      TRANSPORTS.flatMap((via) =>
        pick(outage.traffic[via]).map((answer) => `${via}: ${describeAnswer(answer, faultAt)}`),
      ).slice(0, 20);
    /** The servers where `pick` selects fewer than `min` answers, with how many it did. */
    const fewer = (min: number, pick: (traffic: Traffic) => Answer[]) =>
      TRANSPORTS.flatMap((via) => {
        const count = pick(outage.traffic[via]).length;
        return count < min ? [`${via}: ${count}, fewer than ${min}`] : [];
      });
    const inside = (answer: Answer) => answer.startedAt >= faultIn && answer.endedAt <= restoreAt;

    // No request hangs: every one, API and probes alike, is answered within the bound.
    const late = (answer: Answer) => answer.status === 0 || answer.ms > ANSWER_BOUND_MS;
    expect({ bound: ANSWER_BOUND_MS, late: lines((t) => t.answers.filter(late)) }).toEqual({
      bound: ANSWER_BOUND_MS,
      late: [],
    });

    // Served before the fault bit, or 503 service_unavailable with Retry-After: never a 500, never a bare error.
    expect(lines((t) => t.of().filter((answer) => !is2xx(answer) && !isUnavailable(answer)))).toEqual([]);

    // A request started and answered while the database was away can only be a 503.
    expect(fewer(5, (t) => t.of().filter(inside))).toEqual([]);
    expect(lines((t) => t.of().filter((answer) => inside(answer) && !isUnavailable(answer)))).toEqual([]);

    // Readiness says the instance cannot serve; liveness that the process is fine (so it is not restarted).
    const readyAnswer = (answer: Answer) =>
      (answer.status === 200 && answer.inEnvelope) || isUnavailable(answer);
    expect(lines((t) => t.of(['ready']).filter((answer) => !readyAnswer(answer)))).toEqual([]);
    expect(fewer(2, (t) => t.of(['ready']).filter(inside))).toEqual([]);
    expect(
      lines((t) => t.of(['ready']).filter((answer) => inside(answer) && !isUnavailable(answer))),
    ).toEqual([]);
    expect(fewer(2, (t) => t.of(['live']).filter(inside))).toEqual([]);
    expect(lines((t) => t.of(['live']).filter((answer) => answer.status !== 200))).toEqual([]);
  }

  /** The figures of one fault, for the summary line (docs/reliability.md). */
  function summary(fault: Fault): string {
    const outage = outages[fault];
    const label = fault === 'stop' ? 'stopped (pg_ctl stop -m immediate)' : 'hung (SIGSTOP)';
    if (!outage) {
      return `${label}: not run`;
    }
    const { faultIn, backAt, restoreAt } = outage;
    /** Started once the fault had taken hold and before it was undone. */
    const away = (answer: Answer) => answer.startedAt >= faultIn && answer.startedAt < restoreAt;
    const perServer = TRANSPORTS.map((via) => {
      const traffic = outage.traffic[via];
      const during = traffic.of().filter(away);
      return (
        `${via}: ${during.length} requests ${JSON.stringify(byStatus(during))}, ` +
        `readiness ${JSON.stringify(byStatus(traffic.of(['ready']).filter(away)))}, ` +
        `max answer ${maxMs(traffic.answers)} ms, first 2xx ${outage.firstOk[via].endedAt - backAt} ms after`
      );
    });
    const times = workers[fault];
    return (
      `${label} for ${OUTAGE_MS} ms (answer bound ${ANSWER_BOUND_MS} ms` +
      `${fault === 'stop' ? `, pg_ctl start took ${backAt - restoreAt} ms` : ''}): ${perServer.join('; ')}; ` +
      (times
        ? `workers resumed (ms from the first check): webhook delivered ${times.webhookMs}, order completed ` +
          `${times.orderMs}, scheduled bill run completed ${times.scheduleMs}, automation suspend order completed ` +
          `${times.automationMs}`
        : 'workers: not checked')
    );
  }

  beforeAll(async () => {
    expect(OUTAGE_MS).toBeGreaterThan(ANSWER_BOUND_MS);
    receiver = await WebhookReceiver.start();
    cluster = await startFaultCluster(await freePortIn(PORT_FROM, PORT_TO));
    const [tcp, socket] = await Promise.all([
      startFaultServer(cluster.url, 'database-faults-tcp', SERVER_ENV),
      startFaultServer(cluster.socketUrl, 'database-faults-socket', SOCKET_SERVER_ENV),
    ]);
    servers = { tcp, socket };
    server = tcp;
    pids.tcp = tcp.child.pid;
    pids.socket = socket.child.pid;
    trafficToken = (await newTenant('faults-traffic')).token;
    probe = await newTenant('faults-probe');
    const webhook = await createWebhook(server.url, probe.token, {
      url: receiver.url,
      events: ['subscriber.created'],
    });
    recordSecrets(webhook.secret);
  }, 120_000);

  afterAll(async () => {
    await Promise.all(running.map((each) => each.stop().catch(() => undefined)));
    cluster?.thaw();
    await Promise.all(Object.values(servers).map((each) => each.stop().catch(() => undefined)));
    await cluster?.destroy();
    await receiver?.close();
    console.log(`database faults — ${summary('stop')} | ${summary('hang')}`);
  }, 60_000);

  it('should serve and run every background worker before any fault (the checks the recoveries repeat)', async () => {
    workers.baseline = await workersResume();
  }, 90_000);

  describe.each<[string, Fault]>([
    ['stopped (pg_ctl stop -m immediate)', 'stop'],
    ['hung (SIGSTOP of every postgres process)', 'hang'],
  ])('database %s during traffic', (_, fault) => {
    it('should answer every request within the timeouts: 503 service_unavailable with Retry-After, readiness 503, liveness 200', async () => {
      const outage = await runOutage(fault);
      outages[fault] = outage;
      expectBoundedAnswers(outage);
    }, 120_000);

    it('should serve again and resume every background worker without a restart', async () => {
      expect(outages[fault]).toBeDefined();
      for (const via of TRANSPORTS) {
        const { child } = servers[via]!;
        expect({ via, pid: child.pid, exitCode: child.exitCode, signal: child.signalCode }).toEqual({
          via,
          pid: pids[via],
          exitCode: null,
          signal: null,
        });
      }
      workers[fault] = await workersResume();
    }, 90_000);
  });
});
