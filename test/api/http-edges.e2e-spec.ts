import { connect } from 'node:net';
import request from 'supertest';
import { createInvoice, eventsOf, voidInvoice } from '../support/billing-factory';
import { expectError, expectSuccess, isGeneratedRequestId } from '../support/envelope';
import { bearer, sendJsonText } from '../support/factories';
import { createSubscriber, listen } from '../support/subscriber-factory';
import { createTenantWithToken, startTestApp, type TenantWithToken, type TestApp } from '../support/test-app';
import { itRequiresAuthentication } from '../support/shared-cases';

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;
type Method = (typeof METHODS)[number];

interface Operation {
  method: Method;
  path: string;
  /** The path with every {parameter} replaced by an id no record has. */
  url: string;
  takesBody: boolean;
  queryNames: string[];
}

interface OpenApiOperation {
  requestBody?: unknown;
  parameters?: { in: string; name: string }[];
}

/** Every operation the served document describes: what the API says it takes. */
async function operationsOf(t: TestApp): Promise<Operation[]> {
  const document = (await request(t.http).get('/docs/openapi.json').expect(200)).body as {
    paths: Record<string, Partial<Record<Method, OpenApiOperation>>>;
  };
  return Object.entries(document.paths).flatMap(([path, item]) =>
    METHODS.filter((method) => item[method]).map((method) => {
      const operation = item[method]!;
      return {
        method,
        path,
        url: path.replace(/\{[^}]+\}/g, 'x_0000'),
        takesBody: operation.requestBody !== undefined,
        queryNames: (operation.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name),
      };
    }),
  );
}

/** One request written by hand on a socket (a header supertest or Node's client would not send as given). */
function rawRequest(t: TestApp, text: string): Promise<string> {
  const { port } = t.http.address() as { port: number };
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(text));
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString('utf8')));
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
  });
}

function parseRaw(answer: string): { status: number; headers: Record<string, string>; body: unknown } {
  // An interim 100 Continue (sent to Expect: 100-continue) comes before the answer.
  const [head, body] = answer.replace(/^HTTP\/1\.1 100 Continue\r\n\r\n/, '').split('\r\n\r\n');
  const [statusLine, ...lines] = head.split('\r\n');
  const headers = Object.fromEntries(
    lines.map((line) => [
      line.slice(0, line.indexOf(':')).toLowerCase(),
      line.slice(line.indexOf(':') + 1).trim(),
    ]),
  );
  return { status: Number(statusLine.split(' ')[1]), headers, body: JSON.parse(body) };
}

/** HTTP edges (issue 27 items 6, 9, 10, 20): what an operation does not take is refused, in the envelope. */
describe('HTTP edges', () => {
  let t: TestApp;
  let billing: TenantWithToken;
  let operations: Operation[];
  let portalToken: string;
  /** The token an operation is called with: a portal session's for the portal's own session, else the admin's. */
  const tokenFor = (operation: Operation) =>
    operation.path === '/api/v1/portal/session' ? portalToken : t.adminToken;

  beforeAll(async () => {
    t = await startTestApp({ WEBHOOK_WORKER_ENABLED: 'false', WEBHOOK_ALLOW_PRIVATE: 'true' });
    await listen(t);
    billing = await createTenantWithToken(t, ['subscribers:*', 'billing:*', 'events:read']);
    operations = await operationsOf(t);
    // The portal's own session operations answer only a portal token (any other is 403 before the input is read).
    const subscriber = await createSubscriber(t, billing.token);
    const invite = await request(t.http)
      .post(`/api/v1/subscribers/${subscriber.id}/portal-invites`)
      .set(bearer(billing.token));
    const session = await request(t.http)
      .post('/api/v1/portal/sessions')
      .send({ invite_code: invite.body.data.code });
    expectSuccess(session, 201);
    portalToken = session.body.data.token as string;
  });
  afterAll(async () => {
    await t?.close();
  });

  describe('POST /api/v1/invoices/{id}/void', () => {
    itRequiresAuthentication(() => t, 'post', '/api/v1/invoices/inv_x/void', { reason: 'x' });

    it('should keep the reason on the invoice and in invoice.voided', async () => {
      const subscriber = await createSubscriber(t, billing.token);
      const invoice = await createInvoice(t, billing.token, subscriber.id);
      const res = await request(t.http)
        .post(`/api/v1/invoices/${invoice.id}/void`)
        .set(bearer(billing.token))
        .send({ reason: 'wrong currency' });
      expectSuccess(res);
      expect(res.body.data).toMatchObject({ status: 'void', void_reason: 'wrong currency' });

      const read = await request(t.http).get(`/api/v1/invoices/${invoice.id}`).set(bearer(billing.token));
      expect(read.body.data.void_reason).toBe('wrong currency');
      const [voided] = await eventsOf(t, billing.token, invoice.id, 'invoice.voided');
      expect(voided.data.object).toMatchObject({ status: 'void', void_reason: 'wrong currency' });
    });

    it('should void without a body, or with {}, and say no reason (null)', async () => {
      const subscriber = await createSubscriber(t, billing.token);
      for (const body of [undefined, {}]) {
        const invoice = await createInvoice(t, billing.token, subscriber.id);
        const call = voidInvoice(t, billing.token, invoice.id);
        const res = await (body === undefined ? call : call.send(body));
        expectSuccess(res);
        expect(res.body.data).toMatchObject({ status: 'void', void_reason: null });
        const [voided] = await eventsOf(t, billing.token, invoice.id, 'invoice.voided');
        expect(voided.data.object.void_reason).toBeNull();
      }
    });

    it.each([
      ['a number', { reason: 7 }, 422, 'validation_failed', 'reason'],
      ['blank text', { reason: '   ' }, 422, 'validation_failed', 'reason'],
      ['501 characters', { reason: 'x'.repeat(501) }, 422, 'validation_failed', 'reason'],
      ['null', { reason: null }, 422, 'validation_failed', 'reason'],
      ['a field it does not take', { why: 'wrong currency' }, 400, 'unknown_field', 'why'],
    ])('should refuse %s and leave the invoice open', async (_what, body, status, code, field) => {
      const subscriber = await createSubscriber(t, billing.token);
      const invoice = await createInvoice(t, billing.token, subscriber.id);
      expectError(await voidInvoice(t, billing.token, invoice.id).send(body), status, code, field);
      const read = await request(t.http).get(`/api/v1/invoices/${invoice.id}`).set(bearer(billing.token));
      expect(read.body.data).toMatchObject({ status: 'open', void_reason: null });
    });
  });

  describe('what an operation does not declare', () => {
    it('should answer 400 invalid_query to an unknown query parameter, on every operation', async () => {
      const wrong: string[] = [];
      for (const operation of operations) {
        const res = await request(t.http)
          [operation.method](`${operation.url}?expand=everything`)
          .set(bearer(tokenFor(operation)));
        if (
          res.status !== 400 ||
          res.body.error?.code !== 'invalid_query' ||
          res.body.error?.field !== 'expand'
        ) {
          wrong.push(
            `${operation.method.toUpperCase()} ${operation.path}: ${res.status} ${res.body.error?.code}`,
          );
        }
      }
      expect(wrong).toEqual([]);
      expect(operations.length).toBeGreaterThan(50);
    });

    it('should answer 400 unknown_field to a body sent to any operation that takes none, naming its first key', async () => {
      const bodiless = operations.filter((operation) => !operation.takesBody);
      const wrong: string[] = [];
      for (const operation of bodiless) {
        const res = await request(t.http)
          [operation.method](operation.url)
          .set(bearer(tokenFor(operation)))
          .send({ surprise: 1, other: 2 });
        if (
          res.status !== 400 ||
          res.body.error?.code !== 'unknown_field' ||
          res.body.error?.field !== 'surprise'
        ) {
          wrong.push(
            `${operation.method.toUpperCase()} ${operation.path}: ${res.status} ${res.body.error?.code}`,
          );
        }
      }
      expect(wrong).toEqual([]);
      expect(bodiless.length).toBeGreaterThan(20);
    });

    it('should answer 400 invalid_query to a filter sent empty, not list everything as if none were sent', async () => {
      await createSubscriber(t, billing.token);
      for (const query of ['email=', 'external_id=', 'status=', 'starting_after=', 'email=&email=a@b.c']) {
        const res = await request(t.http).get(`/api/v1/subscribers?${query}`).set(bearer(billing.token));
        expectError(res, 400, 'invalid_query', query.split('=')[0]);
      }
      const services = await request(t.http)
        .get('/api/v1/services?pppoe_username=')
        .set(bearer(t.adminToken));
      expectError(services, 400, 'invalid_query', 'pppoe_username');
    });

    it('should hold the health probes to the same rule (a checker sends their bare URL)', async () => {
      for (const path of ['/health/live', '/health/ready']) {
        expectSuccess(await request(t.http).get(path));
        expectError(await request(t.http).get(path).query({ ts: '1700000000' }), 400, 'invalid_query', 'ts');
      }
    });

    it('should still take an empty body ({}) where there is none to take, and the query parameters declared', async () => {
      const subscriber = await createSubscriber(t, billing.token);
      const invoice = await createInvoice(t, billing.token, subscriber.id, 1000, { draft: true });
      expectSuccess(
        await request(t.http)
          .post(`/api/v1/invoices/${invoice.id}/finalize`)
          .set(bearer(billing.token))
          .send({}),
      );
      expectSuccess(await request(t.http).get('/api/v1/me').set(bearer(billing.token)).send({}));
      const listed = await request(t.http)
        .get('/api/v1/invoices')
        .query({ status: 'open', limit: '1' })
        .set(bearer(billing.token));
      expect(listed.status).toBe(200);
    });

    it('should refuse a body on a GET that takes none, before reading anything', async () => {
      const res = await sendJsonText(t.http, 'get', '/api/v1/me', billing.token, '[1]');
      expectError(res, 400, 'unknown_field');
    });
  });

  describe('GET /api/v1/subscribers/{id}/services and /tickets', () => {
    it('should not document subscriber_id, which the path gives', () => {
      for (const path of ['/api/v1/subscribers/{id}/services', '/api/v1/subscribers/{id}/tickets']) {
        const operation = operations.find(
          (candidate) => candidate.method === 'get' && candidate.path === path,
        );
        expect(operation?.queryNames).toEqual(expect.arrayContaining(['limit', 'status']));
        expect(operation?.queryNames).not.toContain('subscriber_id');
      }
      for (const path of ['/api/v1/services', '/api/v1/tickets']) {
        const operation = operations.find(
          (candidate) => candidate.method === 'get' && candidate.path === path,
        );
        expect(operation?.queryNames).toContain('subscriber_id');
      }
    });

    it('should answer 400 invalid_query to subscriber_id', async () => {
      const tenant = await createTenantWithToken(t, ['subscribers:*', 'provisioning:read', 'tickets:read']);
      const subscriber = await createSubscriber(t, tenant.token);
      for (const list of ['services', 'tickets']) {
        const path = `/api/v1/subscribers/${subscriber.id}/${list}`;
        expect((await request(t.http).get(path).set(bearer(tenant.token))).status).toBe(200);
        const res = await request(t.http)
          .get(path)
          .query({ subscriber_id: 'sub_someone_else' })
          .set(bearer(tenant.token));
        expectError(res, 400, 'invalid_query', 'subscriber_id');
      }
    });

    it('should describe the tickets and provisioning scopes as served', async () => {
      const document = (await request(t.http).get('/docs/openapi.json')).body as {
        components: { schemas: Record<string, { properties?: Record<string, { description?: string }> }> };
      };
      const scopes = Object.values(document.components.schemas).find((schema) =>
        schema.properties?.scopes?.description?.includes('<domain>:*'),
      );
      expect(scopes?.properties?.scopes?.description).toMatch(/tickets:read\|write/);
      expect(scopes?.properties?.scopes?.description).not.toMatch(/reserved|not served/);
    });
  });

  describe('a known path with a method it does not take', () => {
    it('should answer 405 method_not_allowed with Allow, without a token', async () => {
      const res = await request(t.http).put('/api/v1/invoices');
      expectError(res, 405, 'method_not_allowed');
      expect(res.headers.allow).toBe('GET, HEAD, POST');
      const one = await request(t.http).delete('/api/v1/invoices/inv_x').set(bearer(billing.token));
      expectError(one, 405, 'method_not_allowed');
      expect(one.headers.allow).toBe('GET, HEAD');
    });

    it('should list in Allow exactly the methods the document gives each path', async () => {
      const byPath = new Map<string, { url: string; methods: Set<string> }>();
      for (const operation of operations) {
        const entry = byPath.get(operation.path) ?? { url: operation.url, methods: new Set<string>() };
        entry.methods.add(operation.method.toUpperCase());
        if (operation.method === 'get') {
          entry.methods.add('HEAD');
        }
        byPath.set(operation.path, entry);
      }
      const wrong: string[] = [];
      for (const [path, { url, methods }] of byPath) {
        const unused = ['PUT', 'PATCH', 'DELETE', 'POST'].find((method) => !methods.has(method))!;
        const res = await request(t.http)[unused.toLowerCase() as 'put'](url);
        const allow = [...methods].sort().join(', ');
        if (
          res.status !== 405 ||
          res.body.error?.code !== 'method_not_allowed' ||
          res.headers.allow !== allow
        ) {
          wrong.push(`${unused} ${path}: ${res.status} Allow: ${res.headers.allow} (want ${allow})`);
        }
      }
      expect(wrong).toEqual([]);
    });

    it('should still answer 404 route_not_found to a path no method has', async () => {
      const res = await request(t.http).put('/api/v1/nothing-here');
      expectError(res, 404, 'route_not_found');
      expect(res.headers.allow).toBeUndefined();
    });
  });

  describe('responses that carry a secret', () => {
    it('should send Cache-Control: no-store with a new token, a new webhook and a rotated secret', async () => {
      const admin = await createTenantWithToken(t, ['admin']);
      const token = await request(t.http)
        .post('/api/v1/tokens')
        .set(bearer(admin.token))
        .send({ name: 'cache check', scopes: ['events:read'] });
      expectSuccess(token, 201);
      expect(token.headers['cache-control']).toBe('no-store');

      const webhook = await request(t.http)
        .post('/api/v1/webhooks')
        .set(bearer(admin.token))
        .send({ url: 'https://hooks.example.net/isp', events: ['*'] });
      expectSuccess(webhook, 201);
      expect(webhook.headers['cache-control']).toBe('no-store');
      const id = webhook.body.data.id as string;

      const rotated = await request(t.http)
        .post(`/api/v1/webhooks/${id}/rotate-secret`)
        .set(bearer(admin.token));
      expectSuccess(rotated);
      expect(rotated.body.data.secret).toMatch(/^whsec_/);
      expect(rotated.headers['cache-control']).toBe('no-store');

      // A read without a secret is not marked.
      const read = await request(t.http).get(`/api/v1/webhooks/${id}`).set(bearer(admin.token));
      expect(read.headers['cache-control']).toBeUndefined();
      expectSuccess(await request(t.http).delete(`/api/v1/webhooks/${id}`).set(bearer(admin.token)));
    });
  });

  describe('an Expect header other than 100-continue', () => {
    it('should answer 417 expectation_failed in the envelope, with its request id', async () => {
      const answer = parseRaw(
        await rawRequest(
          t,
          'GET /api/v1 HTTP/1.1\r\nHost: localhost\r\nExpect: tea\r\nConnection: close\r\n\r\n',
        ),
      );
      expect(answer.status).toBe(417);
      expect(answer.headers['content-type']).toMatch(/^application\/json/);
      expect(answer.body).toMatchObject({
        success: false,
        error: { code: 'expectation_failed', field: null },
        meta: { api_version: 'v1' },
      });
      const { meta } = answer.body as { meta: { request_id: string } };
      expect(isGeneratedRequestId(meta.request_id)).toBe(true);
      expect(answer.headers['x-request-id']).toBe(meta.request_id);
    });

    it('should still take Expect: 100-continue', async () => {
      const answer = parseRaw(
        await rawRequest(
          t,
          'GET /api/v1 HTTP/1.1\r\nHost: localhost\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n',
        ),
      );
      expect(answer.status).toBe(200);
    });
  });
});
