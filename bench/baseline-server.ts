/**
 * Baseline (a), the floor of the create path: a bare node:http server that parses the JSON body and does the same
 * single-row INSERT into the same `subscribers` table through a pg pool of the app's size (POOL_MAX), then answers 201 with
 * a small JSON body. No framework, no auth, no validation, no event, no transaction block.
 * The INSERT, its parameters, the pool and the answer are bench/baseline-insert.ts, shared with baseline (c).
 * Run as a child of bench/run.ts; env: DATABASE_URL, TENANT_ID, POOL_MAX. Reports {type:'ready', port} over IPC.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { baselinePool, insertSubscriber, type SubscriberInput } from './baseline-insert';

const tenantId = process.env.TENANT_ID ?? '';
const pool = baselinePool();

function send(res: ServerResponse, status: number, body: object): void {
  const json = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(json) });
  res.end(json);
}

async function create(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) {
    chunks.push(chunk as Buffer);
  }
  let body: SubscriberInput;
  try {
    body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as SubscriberInput;
  } catch {
    return send(res, 400, { error: 'invalid_json' });
  }
  send(res, 201, await insertSubscriber(pool, tenantId, body));
}

const server = createServer((req, res) => {
  if (req.method !== 'POST') {
    return send(res, 404, { error: 'route_not_found' });
  }
  create(req, res).catch((error: unknown) => {
    process.stderr.write(`baseline insert failed: ${String(error)}\n`);
    if (!res.headersSent) {
      send(res, 500, { error: 'internal_error' });
    }
  });
});
server.keepAliveTimeout = 65_000;

server.listen(0, '127.0.0.1', () => {
  process.send?.({ type: 'ready', port: (server.address() as AddressInfo).port });
});

process.on('SIGTERM', () => {
  server.close();
  void pool.end().finally(() => process.exit(0));
});
