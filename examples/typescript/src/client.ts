// The typed client: every path, parameter, body and answer below comes from src/schema.d.ts, which
// `npm run generate` makes from the API's openapi.json. Nothing here is written by hand but the helpers.
import { createHash } from 'node:crypto';
import createClient from 'openapi-fetch';
import type { components, paths } from './schema.js';

export type Schemas = components['schemas'];
export type ErrorEnvelope = Schemas['ErrorEnvelope'];
export type ErrorCode = Schemas['ErrorBody']['code'];

export function clientFromEnv() {
  const baseUrl = process.env.ISP_API_URL ?? 'http://localhost:3000';
  const token = process.env.ISP_API_TOKEN;
  if (!token) {
    throw new Error('Set ISP_API_TOKEN to a token with scopes subscribers:*, billing:* and events:read.');
  }
  return createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${token}` } });
}

export type Api = ReturnType<typeof clientFromEnv>;

/** A failed call, with the catalog code and the offending field the API answered. */
export class ApiFailure extends Error {
  constructor(
    readonly what: string,
    readonly status: number,
    readonly body: ErrorEnvelope | undefined,
  ) {
    super(
      `${what}: ${status} ${body ? `${body.error.code} (${body.error.field ?? '-'}): ${body.error.message}` : ''}`,
    );
  }
}

/** One key per operation and row content: a retry or a re-run of the same row replays; a changed row is new work. */
export function idempotencyKey(operation: string, naturalKey: string, body: unknown): string {
  const digest = createHash('sha256').update(JSON.stringify(body)).digest('hex').slice(0, 16);
  return `sync:${operation}:${naturalKey}:${digest}`;
}

/** True when the API answered a stored result again (the same key and body were sent before). */
export function wasReplayed(response: Response): boolean {
  return response.headers.get('Idempotent-Replayed') === 'true';
}

interface Answer {
  error?: ErrorEnvelope;
  response: Response;
}

/** Retries what the API says is worth retrying: 429, 503, and a key whose first request is still running. */
export async function retrying<T extends Answer>(call: () => Promise<T>, attempts = 4): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const answer = await call();
    const { status, headers } = answer.response;
    const busy =
      status === 429 || status === 503 || answer.error?.error.code === 'idempotency_request_in_progress';
    if (!busy || attempt >= attempts) {
      return answer;
    }
    const seconds = Number(headers.get('Retry-After') ?? '1');
    await new Promise((resolve) =>
      setTimeout(resolve, Math.min(Number.isFinite(seconds) ? seconds : 1, 5) * 1000),
    );
  }
}
