import request from 'supertest';
import { expectError } from '../support/envelope';
import { bearer } from '../support/factories';
import { startTestApp, type TestApp, createTenant, issueToken, appSuite } from '../support/test-app';

/**
 * What the served contract promises about headers and servers, checked against the running server: the challenge
 * of a 403 insufficient_scope (RFC 6750 §3.1) and a served document whose server is the origin it was fetched from.
 */
describe('the served contract (issue 27 items 15 and 22)', () => {
  let t: TestApp;

  appSuite((app) => (t = app));

  it('should challenge a token lacking a scope with error="insufficient_scope" and the scope it needs', async () => {
    const tenant = await createTenant(t);
    const issued = await issueToken(t, tenant.id, ['billing:read']);
    const res = await request(t.http).get('/api/v1/subscribers').set(bearer(issued.token));
    expectError(res, 403, 'insufficient_scope');
    expect(res.headers['www-authenticate']).toBe(
      'Bearer error="insufficient_scope", scope="subscribers:read"',
    );
  });

  it('should serve a document whose server is the origin the request came in on', async () => {
    const res = await request(t.http)
      .get('/docs/openapi.json')
      .set('Host', 'isp.example.test:8123')
      .expect(200);
    expect(res.body.openapi).toBe('3.1.0');
    expect(res.body.servers).toEqual([expect.objectContaining({ url: 'http://isp.example.test:8123' })]);
  });

  it('should let PUBLIC_BASE_URL win over the origin of the request', async () => {
    const other = await startTestApp({ PUBLIC_BASE_URL: 'https://api.isp.example' });
    try {
      const res = await request(other.http).get('/docs/openapi.json').set('Host', 'elsewhere:1').expect(200);
      expect(res.body.servers).toEqual([expect.objectContaining({ url: 'https://api.isp.example' })]);
    } finally {
      await other.close();
    }
  });

  it('should keep the token across reloads and offer the operation filter in Swagger UI', async () => {
    const res = await request(t.http).get('/docs/swagger-ui-init.js').expect(200);
    expect(res.text).toMatch(/"persistAuthorization":\s*true/);
    expect(res.text).toMatch(/"filter":\s*true/);
  });
});
