import * as http from 'node:http';
import * as https from 'node:https';
import { isIP } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Clock } from '../common/clock';
import { guardedLookup, hostOf, isForbiddenAddress } from './callback-address';

const MAX_READ_BYTES = 64 * 1024;
const MAX_KEPT_BYTES = 1024;
export const USER_AGENT = 'isp-api-webhooks/1.0';

export interface SendResult {
  statusCode: number | null;
  /** The first KiB of the answer. */
  body: string | null;
  durationMs: number;
  error: string | null;
  /** Seconds from a Retry-After header, when the endpoint sent one. */
  retryAfterS: number | null;
}

/** Seconds from a Retry-After header: a number of them, or an HTTP date measured from the app's `now`. */
export function retryAfterSeconds(header: string | undefined, now: Date): number | null {
  if (!header) {
    return null;
  }
  if (/^\d+$/.test(header.trim())) {
    return Number(header.trim());
  }
  const date = Date.parse(header);
  return Number.isNaN(date) ? null : Math.max(0, Math.ceil((date - now.getTime()) / 1000));
}

/**
 * POSTs one delivery. Redirects are not followed (a 3xx is a failed attempt), the answer is read up to 64 KiB, and
 * unless private addresses are allowed, every address the host resolves to is checked when connecting. The duration
 * is elapsed time (the monotonic clock); `clock` dates a Retry-After given as an HTTP date.
 */
export function sendWebhook(
  target: string,
  headers: Record<string, string>,
  body: string,
  options: { timeoutMs: number; allowPrivate: boolean; clock: Clock },
): Promise<SendResult> {
  const started = performance.now();
  const done = (partial: Partial<SendResult>): SendResult => ({
    statusCode: null,
    body: null,
    error: null,
    retryAfterS: null,
    durationMs: Math.round(performance.now() - started),
    ...partial,
  });
  return new Promise((resolve) => {
    let url: URL;
    try {
      url = new URL(target);
    } catch {
      return resolve(done({ error: 'invalid URL' }));
    }
    const host = hostOf(url);
    if (!options.allowPrivate && isIP(host) && isForbiddenAddress(host)) {
      return resolve(done({ error: `refused: ${host} is a private or reserved address` }));
    }
    const client = url.protocol === 'https:' ? https : http;
    const request = client.request(
      url,
      {
        method: 'POST',
        headers: { ...headers, 'Content-Length': String(Buffer.byteLength(body)) },
        timeout: options.timeoutMs,
        lookup: options.allowPrivate ? undefined : guardedLookup,
        agent: false,
      },
      (response) => {
        const chunks: Buffer[] = [];
        let read = 0;
        response.on('data', (chunk: Buffer) => {
          if (read < MAX_READ_BYTES) {
            chunks.push(chunk);
          }
          read += chunk.length;
          if (read >= MAX_READ_BYTES) {
            response.destroy();
          }
        });
        const finish = () =>
          resolve(
            done({
              statusCode: response.statusCode ?? null,
              body: Buffer.concat(chunks).subarray(0, MAX_KEPT_BYTES).toString('utf8'),
              retryAfterS: retryAfterSeconds(response.headers['retry-after'], options.clock.now()),
            }),
          );
        response.on('end', finish);
        response.on('close', finish);
        response.on('error', finish);
      },
    );
    const deadline = setTimeout(
      () => request.destroy(new Error(`timed out after ${options.timeoutMs} ms`)),
      options.timeoutMs,
    );
    request.on('timeout', () => request.destroy(new Error(`timed out after ${options.timeoutMs} ms`)));
    request.on('error', (error) => {
      clearTimeout(deadline);
      resolve(done({ error: error.message }));
    });
    request.on('close', () => clearTimeout(deadline));
    request.end(body);
  });
}
