import { readFileSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import type { Writable } from 'node:stream';
import { captureLogs, recordSecrets } from './log-capture';

/**
 * The secrets the security suite creates (issue 18 item 6), and the search for them in everything the API says: every
 * response body and header, every event payload, every webhook a receiver got, and the suite's own logs. A secret is
 * allowed only where it is named: the creation response of a token or a webhook (and rotate-secret's response for
 * the new secret). Every secret also goes to `recordSecrets`, so the project teardown searches the whole run's logs.
 */

export interface Secret {
  /** What it is, for the report: `token of tenant A`, `NAS secret (rejected: has spaces)`. */
  name: string;
  value: string;
  /** The tables that keep it, because they use it (a NAS's secret, a service's password); none for a token. */
  storedIn: string[];
}

export interface Leak {
  secret: string;
  where: string;
  /** Up to 80 characters either side of the first hit. */
  context: string;
}

/** The text a response shows the world: its status line's headers and its body. */
export interface Exposed {
  headers?: IncomingHttpHeaders | Record<string, string>;
  text: string;
}

export class SecretScanner {
  readonly secrets: Secret[] = [];
  readonly leaks: Leak[] = [];
  /** How many texts (responses, events, deliveries, log files) were searched. */
  scanned = 0;

  /** Remembers a secret here and for the project teardown's log search. */
  add(name: string, value: string, storedIn: string[] = []): string {
    if (value.length < 8) {
      throw new Error(`secret ${name} is too short to search for: ${value.length} characters`);
    }
    this.secrets.push({ name, value, storedIn });
    recordSecrets(value);
    return value;
  }

  /** The secrets (other than `allowed`) found in `text`. */
  find(text: string, allowed: readonly string[] = []): Secret[] {
    return this.secrets.filter(
      (secret) =>
        !allowed.includes(secret.value) && variants(secret.value).some((form) => text.includes(form)),
    );
  }

  /** Searches a response's headers and body; records every secret found there except `allowed`. */
  scan(where: string, exposed: Exposed, allowed: readonly string[] = []): void {
    this.scanned++;
    const headers = Object.entries(exposed.headers ?? {})
      .map(([name, value]) => `${name}: ${Array.isArray(value) ? value.join(', ') : String(value)}`)
      .join('\n');
    const text = `${headers}\n\n${exposed.text}`;
    for (const secret of this.find(text, allowed)) {
      this.leaks.push({ secret: secret.name, where, context: around(text, secret.value) });
    }
  }

  /** The leaks as lines a failing expectation shows. */
  report(): string[] {
    return this.leaks.map((leak) => `${leak.secret} in ${leak.where}: …${leak.context}…`);
  }
}

/** The forms a secret takes in JSON text and in a URL: as is, JSON-escaped and percent-encoded. */
function variants(value: string): string[] {
  return [...new Set([value, JSON.stringify(value).slice(1, -1), encodeURIComponent(value)])];
}

function around(text: string, value: string): string {
  const at = variants(value)
    .map((form) => text.indexOf(form))
    .find((index) => index >= 0);
  const start = Math.max(0, (at ?? 0) - 80);
  return JSON.stringify(text.slice(start, (at ?? 0) + value.length + 80)).slice(1, -1);
}

/** A log of the run's folder the suite writes to, and reads back once the app that wrote it is closed. */
export class CapturedLog {
  readonly stream: Writable;
  readonly path: string;

  constructor(name: string) {
    this.stream = captureLogs(name);
    this.path = (this.stream as Writable & { path: string }).path;
  }

  /** Ends the stream once everything written so far is on disk. */
  async close(): Promise<void> {
    if (this.stream.writableFinished) {
      return;
    }
    await new Promise<void>((resolve, reject) => {
      this.stream.once('error', reject);
      this.stream.end(() => resolve());
    });
  }

  lines(): string[] {
    return readFileSync(this.path, 'utf8')
      .split('\n')
      .filter((line) => line.length > 0);
  }
}
