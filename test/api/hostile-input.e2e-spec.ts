import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { rawExchange, type RawResponse } from '../reliability/support/raw-client';
import { expectError, isGeneratedRequestId } from '../support/envelope';
import { bearer } from '../support/factories';
import { listen, SUBSCRIBER_SCOPES, uniqueRef } from '../support/subscriber-factory';
import { type TenantWithToken, type TestApp, tenantSuite } from '../support/test-app';

/**
 * Issue #18: the answers the hostile-input suite (test/reliability) found were 500s or left the envelope, each pinned
 * here on both databases: lone UTF-16 surrogates, `__proto__`/`constructor`/`prototype` keys, cursors with years
 * Postgres refuses, and what Node's HTTP parser refuses before any route runs.
 */
describe('Hostile input found by the reliability suite', () => {
  let t: TestApp;
  let tenant: TenantWithToken;
  let port: number;

  tenantSuite(SUBSCRIBER_SCOPES, async (suite) => {
    ({ t, tenant } = suite);
    await listen(t);
    port = (t.http.address() as AddressInfo).port;
  });

  /**
   * A valid subscriber body as JSON text with `fields` (JSON text too) in it, so escapes and keys JSON.stringify would
   * not produce can be sent.
   */
  const postText = (fields: string) =>
    request(t.http)
      .post('/api/v1/subscribers')
      .set(bearer(tenant.token))
      .set('Content-Type', 'application/json')
      .send(`{"external_id":"${uniqueRef()}","status":"prospect",${fields}}`);

  const subscriberCount = async (): Promise<number> => {
    const [row] = await t.dataSource.query<{ n: number }[]>(
      'SELECT count(*)::int AS n FROM subscribers WHERE tenant_id = $1',
      [tenant.tenantId],
    );
    return row.n;
  };

  describe('lone UTF-16 surrogates (JSON may escape them; no Unicode text holds them)', () => {
    it.each([
      ['a lone high surrogate', '"Ada \\ud800 Lovelace"'],
      ['a lone low surrogate', '"Ada \\udfff Lovelace"'],
      ['a reversed pair', '"\\udc00\\ud800"'],
    ])('should answer 422 validation_failed on full_name for %s, storing nothing', async (_, name) => {
      const before = await subscriberCount();
      const res = await postText(`"full_name":${name}`);
      expectError(res, 422, 'validation_failed', 'full_name');
      expect(await subscriberCount()).toBe(before);
    });

    it('should point at the nested field holding one', async () => {
      const res = await postText('"full_name":"Ada","address":{"city":"\\ud83d"}');
      expectError(res, 422, 'validation_failed', 'address.city');
    });

    it('should accept a well-formed pair (an emoji)', async () => {
      const res = await postText('"full_name":"Ada \\ud83d\\ude00"');
      expect(res.status).toBe(201);
      expect(res.body.data.full_name).toBe('Ada 😀');
    });
  });

  describe('__proto__, constructor, prototype and other Object.prototype keys', () => {
    it.each([
      ['__proto__ at the top', '"full_name":"Ada","__proto__":{"status":"active"}', '__proto__'],
      ['constructor at the top', '"full_name":"Ada","constructor":{"x":1}', 'constructor'],
      ['prototype nested', '"full_name":"Ada","address":{"prototype":"x"}', 'address.prototype'],
      ['__proto__ nested', '"full_name":"Ada","address":{"__proto__":{"a":1}}', 'address.__proto__'],
      // class-transformer dropped these metadata keys silently: the create answered 201 without them.
      ['a metadata key valueOf', '"full_name":"Ada","metadata":{"valueOf":{"a":1}}', 'metadata.valueOf'],
      ['a metadata key toString', '"full_name":"Ada","metadata":{"toString":"x"}', 'metadata.toString'],
    ])('should answer 400 unknown_field for %s, storing nothing', async (_, text, field) => {
      const before = await subscriberCount();
      const res = await postText(text);
      expectError(res, 400, 'unknown_field', field);
      expect(await subscriberCount()).toBe(before);
    });
  });

  describe('crafted cursors', () => {
    const cursor = (createdAt: string) =>
      Buffer.from(JSON.stringify([createdAt, 'sub_01J00000000000000000000000'])).toString('base64url');

    it.each([
      '+010000-01-01T00:00:00.000Z',
      '+275760-09-13T00:00:00.000Z',
      '-000001-01-01T00:00:00.000Z',
      '0000-01-01T00:00:00.000Z',
    ])('should answer 400 invalid_cursor for a cursor at %s', async (at) => {
      const res = await request(t.http)
        .get(`/api/v1/subscribers?starting_after=${cursor(at)}`)
        .set(bearer(tenant.token));
      expectError(res, 400, 'invalid_cursor', 'starting_after');
    });

    it.each([
      ['a NUL', 'a\u0000b'],
      ['a quote', "sub_' OR 1=1 --"],
      ['a lone surrogate', '\ud800'],
      ['nothing', ''],
    ])('should answer 400 invalid_cursor for a cursor whose id holds %s', async (_, id) => {
      const raw = Buffer.from(JSON.stringify(['2026-01-01T00:00:00.000Z', id])).toString('base64url');
      const res = await request(t.http)
        .get(`/api/v1/subscribers?starting_after=${raw}`)
        .set(bearer(tenant.token));
      expectError(res, 400, 'invalid_cursor', 'starting_after');
    });

    it('should still accept a cursor in years Postgres stores', async () => {
      const res = await request(t.http)
        .get(`/api/v1/subscribers?starting_after=${cursor('9999-12-31T23:59:59.999Z')}`)
        .set(bearer(tenant.token));
      expect(res.status).toBe(200);
    });
  });

  describe("what Node's HTTP parser refuses, answered in the envelope", () => {
    const send = (text: string): Promise<RawResponse> =>
      rawExchange('127.0.0.1', port, Buffer.from(text, 'latin1'));

    const expectEnvelopeError = (res: RawResponse, status: number, code: string) => {
      expect(res.status).toBe(status);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      const body = JSON.parse(res.text) as {
        success: boolean;
        error: { code: string; field: null };
        meta: { request_id: string };
      };
      expect(body.success).toBe(false);
      expect(body.error.code).toBe(code);
      expect(body.error.field).toBeNull();
      expect(isGeneratedRequestId(body.meta.request_id)).toBe(true);
      expect(res.headers['x-request-id']).toBe(body.meta.request_id);
    };

    it('should answer a malformed request line 400 malformed_request', async () => {
      expectEnvelopeError(
        await send('GET /health/live HTTP/9.Z\r\nHost: x\r\n\r\n'),
        400,
        'malformed_request',
      );
    });

    it('should answer a malformed header 400 malformed_request', async () => {
      expectEnvelopeError(
        await send('GET /health/live HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n'),
        400,
        'malformed_request',
      );
    });

    it('should answer conflicting Content-Length headers 400 malformed_request', async () => {
      expectEnvelopeError(
        await send(
          'POST /api/v1/subscribers HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}',
        ),
        400,
        'malformed_request',
      );
    });

    it('should answer headers past 16 KiB 431 headers_too_large', async () => {
      expectEnvelopeError(
        await send(`GET /health/live HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`),
        431,
        'headers_too_large',
      );
    });

    it('should answer an HTTP/1.1 request without Host 400 malformed_request', async () => {
      expectEnvelopeError(
        await send('GET /health/live HTTP/1.1\r\nConnection: close\r\n\r\n'),
        400,
        'malformed_request',
      );
    });

    it('should still answer an HTTP/1.0 request without Host', async () => {
      const res = await send('GET /health/live HTTP/1.0\r\n\r\n');
      expect(res.status).toBe(200);
    });
  });
});
