import request from 'supertest';
import { type TestApp, appSuite } from '../support/test-app';

describe('Gateway (smoke)', () => {
  let t: TestApp;
  appSuite((app) => (t = app));

  it('should require authentication', async () => {
    const res = await request(t.http).get('/api/v1/me').expect(401);
    expect(res.body).toMatchObject({ success: false, error: { code: 'authentication_required' } });
  });

  it('should answer /api/v1/me for the bootstrap token in the envelope', async () => {
    const res = await request(t.http)
      .get('/api/v1/me')
      .set('Authorization', `Bearer ${t.adminToken}`)
      .expect(200);
    expect(res.body).toMatchObject({
      success: true,
      data: { scopes: ['platform:admin'] },
      meta: { api_version: 'v1' },
    });
  });
});
