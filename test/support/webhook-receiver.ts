import dns from 'node:dns';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import request from 'supertest';
import { waitUntil } from './wait-for';

/**
 * The app's webhook settings for a suite that delivers to a WebhookReceiver: plain http to loopback allowed, a quick
 * poll, quick retries and a short timeout.
 */
export const DELIVERY_ENV: Readonly<Record<string, string>> = {
  WEBHOOK_ALLOW_PRIVATE: 'true',
  WEBHOOK_ALLOW_INSECURE: 'true',
  WEBHOOK_POLL_MS: '100',
  WEBHOOK_RETRY_DELAYS_S: '0.2,0.2,0.2',
  WEBHOOK_TIMEOUT_MS: '2000',
};

/** One request the receiver got, as it arrived. */
export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The body exactly as sent: what a signature is computed over. */
  rawBody: string;
  /** The body parsed as JSON, or null when it is not JSON. */
  body: DeliveryBody | null;
  receivedAt: number;
  /** True once the receiver's answer went out in full; false while waiting or when the sender hung up first. */
  answered: boolean;
}

/** The payload every delivery carries. */
export interface DeliveryBody {
  id: string;
  type: string;
  created_at: string;
  data: { object: Record<string, unknown>; [key: string]: unknown };
}

/** How the receiver answers one request: a status, or a status with headers, a body and a delay. */
export type Reply =
  number | { status: number; headers?: Record<string, string>; body?: string; delayMs?: number };

export interface ReceiverOptions {
  /** Answers used in order, one per request; once they are used up, `fallback` answers. */
  replies?: Reply[];
  /** The answer once `replies` is used up (default 200). */
  fallback?: Reply;
}

/** The webhook headers of a request, in the shape standardwebhooks' `verify` takes. */
export function webhookHeaders(req: ReceivedRequest, signature?: string): Record<string, string> {
  return {
    'webhook-id': String(req.headers['webhook-id']),
    'webhook-timestamp': String(req.headers['webhook-timestamp']),
    'webhook-signature': signature ?? String(req.headers['webhook-signature']),
  };
}

/** The `v1,…` entries of a request's webhook-signature header. */
export function signatureEntries(req: ReceivedRequest): string[] {
  return String(req.headers['webhook-signature'] ?? '')
    .split(' ')
    .filter((entry) => entry.length > 0);
}

/** True when standardwebhooks accepts the request with this secret (and, if given, only this signature entry). */
export function verifies(secret: string, req: ReceivedRequest, signature?: string): boolean {
  try {
    new Webhook(secret).verify(req.rawBody, webhookHeaders(req, signature));
    return true;
  } catch {
    return false;
  }
}

/**
 * A callback endpoint on 127.0.0.1 (a free port) that records every request and answers with a programmable
 * sequence of statuses. Tests wait on it with `waitFor`, which polls rather than sleeping a fixed time.
 */
export class WebhookReceiver {
  readonly requests: ReceivedRequest[] = [];
  private readonly replies: Reply[];
  private fallback: Reply;

  private constructor(
    private readonly server: Server,
    options: ReceiverOptions,
  ) {
    this.replies = [...(options.replies ?? [])];
    this.fallback = options.fallback ?? 200;
  }

  static async start(options: ReceiverOptions = {}): Promise<WebhookReceiver> {
    const server = createServer();
    const receiver = new WebhookReceiver(server, options);
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const rawBody = Buffer.concat(chunks).toString('utf8');
        let body: DeliveryBody | null = null;
        try {
          body = JSON.parse(rawBody) as DeliveryBody;
        } catch {
          body = null;
        }
        receiver.requests.push({
          method: req.method ?? '',
          path: req.url ?? '',
          headers: req.headers,
          rawBody,
          body,
          receivedAt: Date.now(),
          answered: false,
        });
        const recorded = receiver.requests[receiver.requests.length - 1];
        res.on('finish', () => (recorded.answered = true));
        receiver.answer(res, receiver.replies.shift() ?? receiver.fallback);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** The callback address, e.g. http://127.0.0.1:41234/hook. */
  get url(): string {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  /** Queues more answers after those not used yet. */
  reply(...replies: Reply[]): void {
    this.replies.push(...replies);
  }

  /** Changes the answer given once the queue is used up. */
  setFallback(reply: Reply): void {
    this.fallback = reply;
  }

  /** The requests whose body has this event type. */
  ofType(type: string): ReceivedRequest[] {
    return this.requests.filter((req) => req.body?.type === type);
  }

  /** The raw bodies of every request, in arrival order. */
  rawBodies(): string[] {
    return this.requests.map((req) => req.rawBody);
  }

  /** The distinct event ids (webhook-id) the receiver has seen. */
  eventIds(): Set<string> {
    return new Set(this.requests.map((req) => String(req.headers['webhook-id'])));
  }

  /** The distinct event ids of requests the receiver answered in full (the sender was still there to hear it). */
  answeredEventIds(): Set<string> {
    return new Set(
      this.requests.filter((req) => req.answered).map((req) => String(req.headers['webhook-id'])),
    );
  }

  /**
   * Resolves with the matching requests once there are at least `n` of them (all requests when no filter is
   * given); rejects after `timeoutMs` with what did arrive.
   */
  waitFor(
    n: number,
    timeoutMs = 30_000,
    filter: (req: ReceivedRequest) => boolean = () => true,
  ): Promise<ReceivedRequest[]> {
    return waitUntil(
      () => this.requests.filter(filter),
      (matching) => matching.length >= n,
      { timeout: timeoutMs, what: `receiver ${this.url}: ${n} matching requests` },
    ).catch((error: Error) => {
      const seen = this.requests.map(
        (req) => `${req.body?.type ?? '?'} ${String(req.headers['webhook-id'])}`,
      );
      throw new Error(`${error.message} (all received: ${JSON.stringify(seen)})`);
    });
  }

  /** Waits for `n` requests carrying this event type. */
  waitForType(type: string, n = 1, timeoutMs = 30_000): Promise<ReceivedRequest[]> {
    return this.waitFor(n, timeoutMs, (req) => req.body?.type === type);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private answer(res: ServerResponse, reply: Reply): void {
    const spec = typeof reply === 'number' ? { status: reply } : reply;
    const send = () => {
      if (res.destroyed) {
        return;
      }
      res.writeHead(spec.status, { 'Content-Type': 'text/plain', ...spec.headers });
      res.end(spec.body ?? `answered ${spec.status}`);
    };
    if (spec.delayMs) {
      setTimeout(send, spec.delayMs);
    } else {
      send();
    }
  }
}

/** What supertest can be pointed at: an in-process server or the base address of a running one. */
export type Target = Parameters<typeof request>[0];

export const WEBHOOK_ID = /^whk_[0-9A-HJKMNP-TV-Z]{26}$/;
export const DELIVERY_ID = /^dlv_[0-9A-HJKMNP-TV-Z]{26}$/;
export const EVENT_ID = /^evt_[0-9A-HJKMNP-TV-Z]{26}$/;
export const ATTEMPT_ID = /^att_[0-9A-HJKMNP-TV-Z]{26}$/;
export const WEBHOOK_SECRET = /^whsec_[A-Za-z0-9+/]{32}$/;

/** The record GET answers (never with the secret). */
export interface WebhookRecord {
  id: string;
  url: string;
  events: string[];
  description: string | null;
  enabled: boolean;
  disabled_reason: string | null;
  created_at: string;
  updated_at: string;
}

export interface CreatedWebhook extends WebhookRecord {
  secret: string;
}

/** One row of GET /webhooks/{id}/deliveries. */
export interface AttemptRecord {
  id: string;
  delivery_id: string;
  event_id: string;
  event_type: string;
  attempt: number;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
  response_body: string | null;
  next_attempt_at: string | null;
  created_at: string;
}

/** Registers a webhook and fails loudly unless the answer is 201. */
export async function createWebhook(
  target: Target,
  token: string,
  body: Record<string, unknown>,
): Promise<CreatedWebhook> {
  const res = await request(target)
    .post('/api/v1/webhooks')
    .set('Authorization', `Bearer ${token}`)
    .send(body);
  if (res.status !== 201) {
    throw new Error(`create webhook: ${res.status} ${JSON.stringify(res.body)}`);
  }
  return res.body.data as CreatedWebhook;
}

export async function getWebhook(target: Target, token: string, id: string): Promise<WebhookRecord> {
  const res = await request(target).get(`/api/v1/webhooks/${id}`).set('Authorization', `Bearer ${token}`);
  if (res.status !== 200) {
    throw new Error(`get webhook: ${res.status} ${JSON.stringify(res.body)}`);
  }
  return res.body.data as WebhookRecord;
}

/** The attempt log of a webhook, newest first (up to 100 rows). */
export async function listAttempts(target: Target, token: string, id: string): Promise<AttemptRecord[]> {
  const res = await request(target)
    .get(`/api/v1/webhooks/${id}/deliveries?limit=100`)
    .set('Authorization', `Bearer ${token}`);
  if (res.status !== 200) {
    throw new Error(`list attempts: ${res.status} ${JSON.stringify(res.body)}`);
  }
  return res.body.data as AttemptRecord[];
}

/** Waits until the attempt log holds at least `n` rows matching `filter`, and answers the whole log. */
export function waitForAttempts(
  target: Target,
  token: string,
  id: string,
  n: number,
  timeoutMs = 10_000,
  filter: (attempt: AttemptRecord) => boolean = () => true,
): Promise<AttemptRecord[]> {
  return waitUntil(
    () => listAttempts(target, token, id),
    (log) => log.filter(filter).length >= n,
    { timeout: timeoutMs, interval: 50, what: `${n} attempts in the log of ${id}` },
  );
}

/**
 * Deletes every webhook of the token's tenant (or of `tenant`, through X-Tenant-ID), so that no later suite's worker
 * keeps delivering to a receiver that is gone.
 */
export async function deleteAllWebhooks(target: Target, token: string, tenant?: string): Promise<void> {
  const headers: Record<string, string> = { Authorization: `Bearer ${token}` };
  if (tenant) {
    headers['X-Tenant-ID'] = tenant;
  }
  for (;;) {
    const res = await request(target).get('/api/v1/webhooks?limit=100').set(headers);
    if (res.status !== 200) {
      throw new Error(`list webhooks: ${res.status} ${JSON.stringify(res.body)}`);
    }
    const ids = (res.body.data as WebhookRecord[]).map((webhook) => webhook.id);
    if (ids.length === 0) {
      return;
    }
    for (const id of ids) {
      const deleted = await request(target).delete(`/api/v1/webhooks/${id}`).set(headers);
      if (deleted.status !== 200 && deleted.status !== 404) {
        throw new Error(`delete webhook: ${deleted.status} ${JSON.stringify(deleted.body)}`);
      }
    }
  }
}

/**
 * Ends a suite that delivered to receivers: deletes every webhook of `tenants` (which drops whatever is still pending,
 * so no later suite's worker retries into a closed port), closes the app, then the receivers.
 */
export async function closeDeliverySuite(
  t: { http: Target; adminToken: string; close(): Promise<void> } | undefined,
  tenants: { tenantId: string }[],
  receivers: WebhookReceiver[],
): Promise<void> {
  if (t) {
    for (const tenant of tenants) {
      await deleteAllWebhooks(t.http, t.adminToken, tenant.tenantId);
    }
    await t.close();
  }
  for (const receiver of receivers) {
    await receiver.close();
  }
}

/** What a faked name resolves to: its addresses, or the error the lookup fails with. */
export type LookupAnswer = string[] | Error;

/**
 * Makes `dns.promises.lookup` (what registration resolves with) answer `answers[host]` for the names given, and
 * leaves every other name to the real resolver. Restore with `mockRestore()` or `jest.restoreAllMocks()`.
 */
export function fakeRegistrationDns(answers: Record<string, LookupAnswer>): jest.SpyInstance {
  const real = dns.promises.lookup.bind(dns.promises);
  return jest.spyOn(dns.promises, 'lookup').mockImplementation(((
    hostname: string,
    options?: dns.LookupOptions,
  ) => {
    const answer = answers[hostname];
    if (answer === undefined) {
      return real(hostname, options ?? {});
    }
    if (answer instanceof Error) {
      return Promise.reject(answer);
    }
    const list = answer.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    return Promise.resolve(options?.all ? list : list[0]);
  }) as typeof dns.promises.lookup);
}
