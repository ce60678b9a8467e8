import request from 'supertest';
import { expectError, expectList } from '../support/envelope';
import { bearer } from '../support/factories';
import { createSubscriber } from '../support/subscriber-factory';
import { type TenantWithToken, type TestApp, tenantSuite } from '../support/test-app';

/** Issue #32: every list's enum filters take `a,b` (any of them), each item checked. */
describe('Comma lists in list filters', () => {
  let t: TestApp;
  let tenant: TenantWithToken;
  tenantSuite(['admin'], (suite) => ({ t, tenant } = suite));

  const get = (path: string) => request(t.http).get(path).set(bearer(tenant.token));

  it('should require authentication', async () => {
    const res = await request(t.http).get('/api/v1/invoices?status=open,partially_paid');
    expectError(res, 401, 'authentication_required');
  });

  it.each([
    '/api/v1/invoices?status=open,partially_paid',
    '/api/v1/transactions?kind=payment,refund&source=external,adjustment',
    '/api/v1/provisioning-orders?status=acknowledged,failed&action=activate,suspend',
    '/api/v1/services?status=active,suspended',
    '/api/v1/notifications?status=sent,failed',
    '/api/v1/billing-runs?status=running,completed',
    '/api/v1/tickets?status=new,open&priority=high,urgent&type=incident,task',
  ])('should answer %s', async (path) => {
    expectList(await get(path));
  });

  it.each([
    ['/api/v1/invoices?status=open,bogus', 'status', /"bogus"/],
    ['/api/v1/invoices?status=open,,paid', 'status', /empty item/],
    ['/api/v1/transactions?kind=payment&source=nope', 'source', /"nope"/],
    ['/api/v1/provisioning-orders?action=activate,explode', 'action', /"explode"/],
    ['/api/v1/events?type=subscriber.*,Bad-Type', 'type', /"Bad-Type"/],
    ['/api/v1/events?type=,', 'type', /empty item/],
  ])('should refuse %s naming %s', async (path, field, message) => {
    const res = await get(path);
    expectError(res, 400, 'invalid_query', field);
    expect(res.body.error.message).toMatch(message);
  });

  it('should list the events of any of several types and prefixes', async () => {
    const subscriber = await createSubscriber(t, tenant.token);
    const types = async (query: string) => {
      const res = await get(`/api/v1/events?limit=100&${query}`);
      expectList(res);
      return new Set((res.body.data as { type: string }[]).map((event) => event.type));
    };
    const both = await types('type=tenant.*,subscriber.created');
    expect(both).toEqual(new Set(['tenant.created', 'subscriber.created']));
    expect(await types(`type=subscriber.created,subscriber.created&subject_id=${subscriber.id}`)).toEqual(
      new Set(['subscriber.created']),
    );
    expect(await types('type=tenant.created')).toEqual(new Set(['tenant.created']));
  });
});
