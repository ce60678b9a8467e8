import request from 'supertest';
import { PORTAL_CSP } from '../../src/portal';
import { expectError } from '../support/envelope';
import { bearer } from '../support/factories';
import { createSubscriber } from '../support/subscriber-factory';
import { createTenantWithToken, startTestApp, type TestApp } from '../support/test-app';

/** The customer portal's pages at /portal/ (docs/portal.md): served by the app, strict headers, the API unchanged. */
describe('Portal pages served at /portal/', () => {
  let t: TestApp;
  const BASE = 'https://isp.example/api-prefix';

  beforeAll(async () => {
    t = await startTestApp({ PUBLIC_BASE_URL: BASE });
  });
  afterAll(() => t.close());

  it('should serve the page with a strict Content-Security-Policy, no inline script or style, revalidated', async () => {
    const res = await request(t.http).get('/portal/').expect(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['content-security-policy']).toBe(PORTAL_CSP);
    expect(PORTAL_CSP).toContain("script-src 'self'");
    expect(PORTAL_CSP).toContain("connect-src 'self'");
    expect(PORTAL_CSP).toContain("frame-ancestors 'none'");
    expect(PORTAL_CSP).not.toContain('unsafe');
    expect(res.headers).toMatchObject({
      'x-content-type-options': 'nosniff',
      'x-frame-options': 'DENY',
      'referrer-policy': 'no-referrer',
      'cache-control': 'no-cache',
    });
    expect(res.text).toContain('<script type="module" src="app.js"></script>');
    expect(res.text).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(res.text).not.toMatch(/<style|\sstyle=|\son[a-z]+=/i);
    const again = await request(t.http).get('/portal/').set('If-None-Match', res.headers.etag);
    expect(again.status).toBe(304);
  });

  it('should redirect /portal to /portal/ and serve its modules and stylesheet', async () => {
    const bare = await request(t.http).get('/portal').expect(301);
    expect(bare.headers.location).toBe('/portal/');
    for (const [file, type] of [
      ['app.js', 'text/javascript; charset=utf-8'],
      ['pages/usage.js', 'text/javascript; charset=utf-8'],
      ['portal.css', 'text/css; charset=utf-8'],
      ['favicon.svg', 'image/svg+xml'],
    ]) {
      const res = await request(t.http).get(`/portal/${file}`);
      expect({ file, status: res.status, type: res.headers['content-type'] }).toEqual({
        file,
        status: 200,
        type,
      });
    }
  });

  it("should serve Chart.js's browser build from its package, cached for a day", async () => {
    const res = await request(t.http).get('/portal/vendor/chart.umd.js').expect(200);
    expect(res.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(res.headers['cache-control']).toBe('public, max-age=86400');
    expect(res.text).toContain('Chart');
    const head = await request(t.http).head('/portal/vendor/chart.umd.js').expect(200);
    expect(head.headers['content-length']).toBe(res.headers['content-length']);
  });

  it('should answer a missing file, another method or a path out of the folder as any unknown path', async () => {
    expectError(await request(t.http).get('/portal/nope.js'), 404, 'route_not_found');
    expectError(await request(t.http).get('/portal/vendor/chart.js'), 404, 'route_not_found');
    expectError(await request(t.http).post('/portal/').send({}), 404, 'route_not_found');
    expectError(await request(t.http).get('/portal/%2e%2e/portal.module.ts'), 404, 'route_not_found');
    expectError(await request(t.http).get('/portal/..%2fportal.module.ts'), 404, 'route_not_found');
  });

  it('should leave the API as it was: no portal headers, its envelope and 404s', async () => {
    const res = await request(t.http).get('/api/v1').expect(200);
    expect(res.headers['content-security-policy']).toBeUndefined();
    expect(res.body.success).toBe(true);
    expectError(await request(t.http).get('/api/v1/portal/nope'), 404, 'route_not_found');
  });

  it("should give an invite the link of this server's own portal when only PUBLIC_BASE_URL is set", async () => {
    const op = await createTenantWithToken(t, ['subscribers:*']);
    const subscriber = await createSubscriber(t, op.token);
    const res = await request(t.http)
      .post(`/api/v1/subscribers/${subscriber.id}/portal-invites`)
      .set(bearer(op.token))
      .expect(201);
    expect(res.body.data.url).toBe(`${BASE}/portal/?invite=${res.body.data.code}`);
  });
});
