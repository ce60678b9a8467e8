import { Agent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { connect } from 'node:net';

/**
 * A plain HTTP client for the hostile-input suite. supertest re-serializes bodies and refuses odd headers; this sends
 * exactly the bytes and headers asked (one keep-alive agent for speed), and falls back to a raw socket when Node's own
 * client refuses to send a header (a NUL in Content-Type, say), so the server is the one that decides.
 */
export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  /** The body as text (UTF-8). */
  text: string;
}

export interface RawRequest {
  method: string;
  /** Path and query exactly as they go on the request line. */
  path: string;
  headers: Record<string, string>;
  body: Buffer | null;
  chunked?: boolean;
}

export class RawClient {
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 8 });

  constructor(
    private readonly host: string,
    private readonly port: number,
  ) {}

  async send(req: RawRequest): Promise<RawResponse> {
    try {
      return await this.viaHttpOnce(req);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (
        code === 'ERR_INVALID_CHAR' ||
        code === 'ERR_UNESCAPED_CHARACTERS' ||
        code === 'ERR_INVALID_HTTP_TOKEN'
      ) {
        return this.viaSocket(req);
      }
      throw error;
    }
  }

  /** JSON in, parsed envelope out: for building fixtures. */
  async json(method: string, path: string, headers: Record<string, string>, body?: unknown) {
    const res = await this.send({
      method,
      path,
      headers: body === undefined ? headers : { ...headers, 'Content-Type': 'application/json' },
      body: body === undefined ? null : Buffer.from(JSON.stringify(body)),
    });
    let parsed: { success?: boolean; data?: Record<string, unknown> & Array<Record<string, unknown>> } = {};
    try {
      parsed = JSON.parse(res.text) as typeof parsed;
    } catch {
      // left empty: the caller checks the status
    }
    return { status: res.status, body: parsed, text: res.text };
  }

  close(): void {
    this.agent.destroy();
  }

  /**
   * Node's advice for keep-alive clients: a request that fails with ECONNRESET on a reused connection met the server
   * closing that idle connection (its keepAliveTimeout) as the request went out, and never reached it; it is sent
   * again once, on a fresh connection. Without it a loaded machine turned the race into "no HTTP answer" failures.
   */
  private async viaHttpOnce(req: RawRequest): Promise<RawResponse> {
    try {
      return await this.viaHttp(req);
    } catch (error) {
      if (
        (error as { reusedSocket?: boolean }).reusedSocket &&
        (error as NodeJS.ErrnoException).code === 'ECONNRESET'
      ) {
        return this.viaHttp(req);
      }
      throw error;
    }
  }

  private viaHttp(req: RawRequest): Promise<RawResponse> {
    return new Promise((resolve, reject) => {
      const headers: Record<string, string> = { ...req.headers };
      if (!req.chunked) {
        headers['Content-Length'] = String(req.body?.length ?? 0);
      }
      const outgoing = httpRequest(
        { host: this.host, port: this.port, method: req.method, path: req.path, headers, agent: this.agent },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              headers: res.headers,
              text: Buffer.concat(chunks).toString('utf8'),
            }),
          );
          res.on('error', reject);
        },
      );
      outgoing.on('error', (error) => reject(Object.assign(error, { reusedSocket: outgoing.reusedSocket })));
      if (req.chunked && req.body) {
        // Two chunks, so the framing is really chunked even for a small body.
        const half = Math.floor(req.body.length / 2);
        outgoing.write(req.body.subarray(0, half));
        outgoing.end(req.body.subarray(half));
      } else {
        outgoing.end(req.body ?? undefined);
      }
    });
  }

  /** One request on its own connection, written byte for byte; the answer read until the server closes. */
  viaSocket(req: RawRequest): Promise<RawResponse> {
    const lines = [
      `${req.method} ${req.path} HTTP/1.1`,
      `Host: ${this.host}:${this.port}`,
      'Connection: close',
    ];
    for (const [name, value] of Object.entries(req.headers)) {
      lines.push(`${name}: ${value}`);
    }
    lines.push(`Content-Length: ${req.body?.length ?? 0}`);
    const head = Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');
    return rawExchange(this.host, this.port, Buffer.concat([head, req.body ?? Buffer.alloc(0)]));
  }
}

/**
 * Writes `bytes` on a fresh connection and parses what comes back once the server closes it (every request sent
 * this way says `Connection: close`, or is one the server refuses and closes on).
 */
export function rawExchange(
  host: string,
  port: number,
  bytes: Buffer,
  timeoutMs = 15_000,
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port });
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no complete answer within ${timeoutMs} ms`));
    }, timeoutMs);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', () => undefined); // a reset after the answer is the server closing; judged by what arrived
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(parseResponse(Buffer.concat(chunks)));
    });
    // No half-close after writing: Node's server drops a request still in progress when its client ends first.
    socket.write(bytes);
  });
}

function parseResponse(data: Buffer): RawResponse {
  const split = data.indexOf('\r\n\r\n');
  if (split < 0) {
    return { status: 0, headers: {}, text: data.toString('utf8') };
  }
  const [statusLine, ...headerLines] = data.subarray(0, split).toString('latin1').split('\r\n');
  const headers: IncomingHttpHeaders = {};
  for (const line of headerLines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let body = data.subarray(split + 4);
  if (String(headers['transfer-encoding']).toLowerCase() === 'chunked') {
    const parts: Buffer[] = [];
    let rest = body;
    for (;;) {
      const end = rest.indexOf('\r\n');
      const size = parseInt(rest.subarray(0, end).toString('latin1'), 16);
      if (!(size > 0)) {
        break;
      }
      parts.push(rest.subarray(end + 2, end + 2 + size));
      rest = rest.subarray(end + 4 + size);
    }
    body = Buffer.concat(parts);
  } else if (headers['content-length'] !== undefined) {
    body = body.subarray(0, Number(headers['content-length']));
  }
  return { status: Number(statusLine.split(' ')[1] ?? 0), headers, text: body.toString('utf8') };
}
