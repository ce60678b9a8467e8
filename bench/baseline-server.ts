/**
 * Baseline (a), the floor of the create path: a bare node:http server that parses the JSON body and does the same
 * single-row INSERT into the same `subscribers` table through a pg pool of the app's size (POOL_MAX), then answers 201 with
 * a small JSON body. No framework, no auth, no validation, no event, no transaction block.
 * Run as a child of bench/run.ts; env: DATABASE_URL, TENANT_ID, POOL_MAX. Reports {type:'ready', port} over IPC.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'pg';
import { newId } from '../src/common/ids';

const tenantId = process.env.TENANT_ID ?? '';
const pool = new Pool({
  connectionString: process.env.DATABASE_URL,
  max: Number(process.env.POOL_MAX ?? 20),
});

const INSERT = `INSERT INTO subscribers (tenant_id, id, external_id, full_name, email, email_normalized, phone, status,
  suspension_reason, billing_profile_id, address, metadata, created_at, updated_at)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`;

interface Body {
  external_id?: string;
  full_name?: string;
  email?: string;
  phone?: string;
  status?: string;
  address?: object;
  metadata?: object;
}

function send(res: ServerResponse, status: number, body: object): void {
  const json = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(json) });
  res.end(json);
}

async function create(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  let body: Body;
  try {
    body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Body;
  } catch {
    return send(res, 400, { error: 'invalid_json' });
  }
  const now = new Date();
  const id = newId('sub');
  await pool.query(INSERT, [
    tenantId,
    id,
    body.external_id ?? null,
    body.full_name ?? '',
    body.email ?? null,
    body.email ? body.email.toLowerCase() : null,
    body.phone ?? null,
    body.status ?? 'active',
    null,
    null,
    body.address ?? null,
    body.metadata ?? {},
    now,
    now,
  ]);
  send(res, 201, {
    data: {
      id,
      external_id: body.external_id ?? null,
      full_name: body.full_name,
      created_at: now.toISOString(),
    },
  });
}

const server = createServer((req, res) => {
  if (req.method !== 'POST') return send(res, 404, { error: 'route_not_found' });
  create(req, res).catch((error: unknown) => {
    process.stderr.write(`baseline insert failed: ${String(error)}\n`);
    if (!res.headersSent) send(res, 500, { error: 'internal_error' });
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
