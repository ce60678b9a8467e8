import express from 'express';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { OpenApiContract } from '../support/contract/openapi-validator';
import '../support/contract/response-contract.setup';

/**
 * The response contract check of the e2e project can fail (issue 27, "Proof in CI"): a tiny document and a tiny
 * server that answers, on demand, a wrong body, an unlisted status, a missing required header or a bad error
 * envelope; each must fail the supertest request that received it, and the conforming answers must pass. Written in
 * both OpenAPI 3.1 (anyOf null, components.headers) and 3.0 (`nullable`) spellings.
 */

const envelope = {
  type: 'object',
  required: ['success', 'error', 'meta'],
  properties: {
    success: { const: false },
    error: {
      type: 'object',
      required: ['code', 'message', 'field'],
      properties: {
        code: { type: 'string' },
        message: { type: 'string' },
        field: { type: ['string', 'null'] },
      },
    },
    meta: { type: 'object', required: ['request_id'], properties: { request_id: { type: 'string' } } },
  },
};

function documentFor(version: '3.0.3' | '3.1.0') {
  const nullableNote =
    version === '3.1.0'
      ? { anyOf: [{ $ref: '#/components/schemas/Note' }, { type: 'null' }] }
      : { allOf: [{ $ref: '#/components/schemas/Note' }], nullable: true };
  const json = (schema: object) => ({ content: { 'application/json': { schema } } });
  return {
    openapi: version,
    paths: {
      '/things/{id}': {
        get: {
          responses: {
            '200': {
              description: 'ok',
              headers: { 'X-Request-ID': { $ref: '#/components/headers/X-Request-ID' } },
              ...json({
                type: 'object',
                required: ['id', 'count', 'note', 'at'],
                properties: {
                  id: { type: 'string' },
                  count: { type: 'integer', minimum: 0 },
                  note: nullableNote,
                  at: { type: 'string', format: 'date-time' },
                },
              }),
            },
            '404': { description: 'none', ...json({ $ref: '#/components/schemas/ErrorEnvelope' }) },
          },
        },
      },
    },
    components: {
      schemas: {
        Note: { type: 'object', required: ['text'], properties: { text: { type: 'string' } } },
        ErrorEnvelope: envelope,
      },
      headers: { 'X-Request-ID': { required: true, schema: { type: 'string', minLength: 1 } } },
    },
  };
}

type Mode = 'ok' | 'null-note' | 'wrong-body' | 'bad-date' | 'unlisted-status' | 'no-header' | 'not-envelope';

function serve(): Promise<Server> {
  const app = express();
  const good = { id: 'a', count: 1, note: { text: 'x' }, at: '2026-01-01T00:00:00.000Z' };
  const failure = {
    success: false,
    error: { code: 'not_found', message: 'no', field: null },
    meta: { request_id: 'r', api_version: 'v1' },
  };
  app.get('/things/:mode', (req, res) => {
    const mode = req.params.mode as Mode;
    if (mode !== 'no-header') {
      res.setHeader('X-Request-ID', 'req_test');
    }
    const bodies: Record<Mode, [number, unknown]> = {
      ok: [200, good],
      'null-note': [200, { ...good, note: null }],
      'wrong-body': [200, { ...good, count: 'one' }],
      'bad-date': [200, { ...good, at: '2026-02-30T00:00:00Z' }],
      'unlisted-status': [409, failure],
      'no-header': [200, good],
      'not-envelope': [404, { message: 'Not Found' }],
    };
    const [status, body] = bodies[mode] ?? [404, failure];
    res.status(status).json(body);
  });
  app.get('/elsewhere/:kind', (req, res) => {
    if (req.params.kind === 'html') {
      res.status(200).type('html').send('<html></html>');
    } else if (req.params.kind === 'envelope') {
      res.status(404).json(failure);
    } else {
      res.status(404).json({ statusCode: 404, message: 'Cannot GET' });
    }
  });
  return new Promise((resolve) => {
    const server = app.listen(0, '127.0.0.1', () => resolve(server));
  });
}

describe.each(['3.1.0', '3.0.3'] as const)('response contract check, OpenAPI %s', (version) => {
  let server: Server;
  const contract = new OpenApiContract(documentFor(version) as never);

  beforeAll(async () => {
    server = await serve();
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  // fetch, not supertest: supertest's answers are checked against the real openapi.json by the setup file.
  const problemsOf = async (path: string) => {
    const { port } = server.address() as AddressInfo;
    const res = await fetch(`http://127.0.0.1:${port}${path}`);
    const headers = Object.fromEntries(res.headers.entries());
    return contract.check({ method: 'GET', url: path, status: res.status, headers, text: await res.text() });
  };

  it('passes a conforming answer, a null where the schema allows it, and an error envelope off the document', async () => {
    expect(await problemsOf('/things/ok')).toEqual([]);
    expect(await problemsOf('/things/null-note')).toEqual([]);
    expect(await problemsOf('/elsewhere/envelope')).toEqual([]);
    expect(await problemsOf('/elsewhere/html')).toEqual([]);
  });

  it('fails a wrong body, naming the property', async () => {
    expect((await problemsOf('/things/wrong-body')).join('\n')).toMatch(/\/count must be integer/);
  });

  it('fails a date-time that is no date', async () => {
    expect((await problemsOf('/things/bad-date')).join('\n')).toMatch(/\/at must match format "date-time"/);
  });

  it('fails a status the operation does not list', async () => {
    expect(await problemsOf('/things/unlisted-status')).toEqual([
      'status 409 is not listed (listed: 200, 404)',
    ]);
  });

  it('fails a missing required header', async () => {
    expect(await problemsOf('/things/no-header')).toEqual(['required header X-Request-ID is missing']);
  });

  it('fails a JSON refusal off the document that is not the error envelope', async () => {
    expect((await problemsOf('/elsewhere/other')).join('\n')).toMatch(
      /must have required property 'success'/,
    );
    expect((await problemsOf('/things/not-envelope')).join('\n')).toMatch(
      /must have required property 'success'/,
    );
  });
});

describe('the e2e setup file fails the supertest request that received a non-conforming answer', () => {
  let server: Server;

  beforeAll(async () => {
    server = await serve();
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  // The real openapi.json knows no /things path: a JSON refusal there must be the envelope, an HTML page is skipped.
  it('rejects the promise with the method, path, status and problems', async () => {
    await expect(request(server).get('/elsewhere/other')).rejects.toThrow(
      /response does not match openapi\.json: GET \/elsewhere\/other → 404 \(request \(no X-Request-ID\)\)\n {2}.*required property 'success'/,
    );
    await expect(request(server).get('/elsewhere/envelope').expect(404)).resolves.toBeDefined();
    await expect(request(server).get('/elsewhere/html').expect(200)).resolves.toBeDefined();
  });

  it('passes the violation to an end() callback too', (done) => {
    request(server)
      .get('/elsewhere/other')
      .end((error: Error | null) => {
        expect(error?.name).toBe('ContractViolation');
        done();
      });
  });
});
