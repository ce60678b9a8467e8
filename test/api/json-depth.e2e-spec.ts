import request from 'supertest';
import { expectError } from '../support/envelope';
import { bearer } from '../support/factories';
import { SUBSCRIBER_SCOPES, subscriberBody } from '../support/subscriber-factory';
import { type TenantWithToken, type TestApp, tenantSuite } from '../support/test-app';

/** `[[[…]]]` nested `depth` levels. */
function deepArray(depth: number): string {
  return '['.repeat(depth) + ']'.repeat(depth);
}

/** `{"":{"":…1}}` nested `depth` levels (5 bytes a level: 200,000 levels fit in 1 MiB). */
function deepObject(depth: number): string {
  return '{"":'.repeat(depth) + '1' + '}'.repeat(depth);
}

/** A subscriber body whose metadata nests so that the whole body is `depth` levels deep. */
function bodyWithDeepMetadata(depth: number): string {
  const body = JSON.stringify(subscriberBody({ metadata: '__DEEP__' }));
  return body.replace('"__DEEP__"', deepObject(depth - 1));
}

describe('JSON nesting depth of request bodies', () => {
  let t: TestApp;
  let tenant: TenantWithToken;

  tenantSuite(SUBSCRIBER_SCOPES, (suite) => ({ t, tenant } = suite));

  function post(body: string, idempotencyKey?: string) {
    const req = request(t.http)
      .post('/api/v1/subscribers')
      .set(bearer(tenant.token))
      .set('Content-Type', 'application/json');
    if (idempotencyKey) {
      req.set('X-Idempotency-Key', idempotencyKey);
    }
    return req.send(body);
  }

  // An object level costs 5 bytes, so 200,000 is about as deep as an object fits in the 1 MiB limit.
  const DEEP_BODIES = [
    ['an array nested 300,000', deepArray(300_000)],
    ['an object nested 200,000', deepObject(200_000)],
  ];

  it.each(DEEP_BODIES)('should answer 400 invalid_json naming the bound to %s deep', async (_label, body) => {
    const res = await post(body);
    expectError(res, 400, 'invalid_json');
    expect(res.body.error.message).toContain('64');
  });

  it.each(DEEP_BODIES)(
    'should answer 400 invalid_json to %s deep under an idempotency key',
    async (_label, body) => {
      const res = await post(body, `deep-${Date.now()}-${Math.random()}`);
      expectError(res, 400, 'invalid_json');
    },
  );

  it('should answer 400 invalid_json to a body one level past the bound', async () => {
    const res = await post(bodyWithDeepMetadata(65));
    expectError(res, 400, 'invalid_json');
  });

  it('should judge the fields of a body nested exactly 64 deep', async () => {
    const res = await post(bodyWithDeepMetadata(64), `deep-64-${Date.now()}`);
    expectError(res, 422, 'validation_failed', 'metadata');
  });

  it('should not count brackets inside strings toward the depth', async () => {
    const res = await post(
      JSON.stringify(subscriberBody({ full_name: '['.repeat(100), metadata: { note: '{'.repeat(200) } })),
    );
    expect(res.status).toBe(201);
    expect(res.body.data.full_name).toBe('['.repeat(100));
  });

  it('should not be fooled by escaped quotes inside strings', async () => {
    const res = await post(JSON.stringify(subscriberBody({ full_name: 'a \\" [[[ "quoted" {{{' })));
    expect(res.status).toBe(201);
  });
});
