/**
 * Steady traffic against a running server, every answer recorded with its timing (issue 18 item 4): a few clients
 * looping over a create and a read of a subscriber, and a probe asking /health/ready and /health/live a few times a
 * second. Nothing is retried; a request that gets no answer within its deadline is recorded with status 0.
 */
import { randomBytes } from 'node:crypto';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export type Operation = 'create' | 'read' | 'list' | 'ready' | 'live';

/** One request and how it was answered. */
export interface Answer {
  op: Operation;
  startedAt: number;
  endedAt: number;
  ms: number;
  /** The HTTP status, or 0 when no answer came within the deadline (or the connection failed). */
  status: number;
  /** The envelope's error code, if any. */
  code: string | null;
  retryAfter: string | null;
  /** Whether the body is the API's envelope (success, meta.request_id; error.code on a failure). */
  inEnvelope: boolean;
  /** Why there was no answer (status 0), or the start of a body outside the envelope. */
  problem: string | null;
}

export interface TrafficOptions {
  /** How many clients loop over create + read at once. */
  clients: number;
  /** A request not answered within this is given up and recorded with status 0. */
  deadlineMs: number;
  /** How often the health probe asks readiness and liveness. */
  probeEveryMs: number;
  /** A client pauses this long after an answer other than 2xx (so an outage is sampled, not flooded). */
  pauseAfterFailureMs: number;
}

/** Creates and reads subscribers of one tenant from `clients` loops, plus the health probe, until `stop`. */
export class Traffic {
  readonly answers: Answer[] = [];
  private running = false;
  private loops: Promise<void>[] = [];
  private counter = 0;
  /** Keeps external ids unique across Traffic instances and runs. */
  private readonly runId = randomBytes(4).toString('hex');

  constructor(
    private readonly baseUrl: string,
    private readonly token: string,
    private readonly options: TrafficOptions,
  ) {}

  start(): void {
    this.running = true;
    this.loops = [...Array.from({ length: this.options.clients }, (_, i) => this.client(i)), this.probe()];
  }

  /** Ends the loops and waits for the requests in flight. */
  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
  }

  /** The answers with `op` among `ops` (the API's, by default: not the health probe's). */
  of(ops: Operation[] = ['create', 'read', 'list']): Answer[] {
    return this.answers.filter((answer) => ops.includes(answer.op));
  }

  private async client(index: number): Promise<void> {
    let lastId: string | null = null;
    while (this.running) {
      const { answer, body } = await this.send('create', 'POST', '/api/v1/subscribers', {
        external_id: `faults-${this.runId}-${index}-${(this.counter += 1)}`,
        full_name: 'Outage Traffic',
        status: 'prospect',
      });
      if (answer.status === 201) {
        lastId = (body as { data: { id: string } }).data.id;
      } else {
        await sleep(this.options.pauseAfterFailureMs);
      }
      if (!this.running) {
        return;
      }
      const read = lastId
        ? await this.send('read', 'GET', `/api/v1/subscribers/${lastId}`)
        : await this.send('list', 'GET', '/api/v1/subscribers?limit=5');
      if (read.answer.status !== 200) {
        await sleep(this.options.pauseAfterFailureMs);
      }
    }
  }

  private async probe(): Promise<void> {
    while (this.running) {
      await Promise.all([
        this.send('ready', 'GET', '/health/ready'),
        this.send('live', 'GET', '/health/live'),
      ]);
      await sleep(this.options.probeEveryMs);
    }
  }

  private async send(
    op: Operation,
    method: string,
    path: string,
    json?: unknown,
  ): Promise<{ answer: Answer; body: unknown }> {
    const startedAt = Date.now();
    const answer: Answer = {
      op,
      startedAt,
      endedAt: startedAt,
      ms: 0,
      status: 0,
      code: null,
      retryAfter: null,
      inEnvelope: false,
      problem: null,
    };
    let body: unknown = null;
    try {
      const res = await fetch(`${this.baseUrl}${path}`, {
        method,
        headers: {
          Authorization: `Bearer ${this.token}`,
          ...(json === undefined ? {} : { 'Content-Type': 'application/json' }),
        },
        body: json === undefined ? undefined : JSON.stringify(json),
        signal: AbortSignal.timeout(this.options.deadlineMs),
      });
      const text = await res.text();
      answer.status = res.status;
      answer.retryAfter = res.headers.get('retry-after');
      try {
        body = JSON.parse(text);
        const envelope = body as {
          success?: unknown;
          meta?: { request_id?: unknown };
          error?: { code?: unknown };
        };
        answer.code = typeof envelope.error?.code === 'string' ? envelope.error.code : null;
        answer.inEnvelope =
          typeof envelope.success === 'boolean' &&
          typeof envelope.meta?.request_id === 'string' &&
          (envelope.success || answer.code !== null);
      } catch {
        answer.problem = `not JSON: ${text.slice(0, 200)}`;
      }
    } catch (error) {
      answer.problem = (error as Error).message;
    }
    answer.endedAt = Date.now();
    answer.ms = answer.endedAt - startedAt;
    this.answers.push(answer);
    return { answer, body };
  }
}

/** How many answers of each kind: `503 service_unavailable`, `201`, `0 (no answer)`. */
export function byStatus(answers: Answer[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const answer of answers) {
    const key =
      answer.status === 0
        ? '0 (no answer)'
        : answer.code
          ? `${answer.status} ${answer.code}`
          : String(answer.status);
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

/** The longest answer time, 0 for none. */
export function maxMs(answers: Answer[]): number {
  return answers.reduce((max, answer) => Math.max(max, answer.ms), 0);
}

/** A short readable line per answer, for failure messages. */
export function describeAnswer(answer: Answer, origin: number): string {
  return (
    `${answer.op} +${answer.startedAt - origin}ms → ${answer.status}${answer.code ? ` ${answer.code}` : ''} ` +
    `in ${answer.ms}ms${answer.retryAfter ? ` (Retry-After ${answer.retryAfter})` : ''}` +
    `${answer.problem ? ` [${answer.problem}]` : ''}`
  );
}
