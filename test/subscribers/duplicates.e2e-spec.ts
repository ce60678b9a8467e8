import { expectError, expectSuccess } from '../support/envelope';
import {
  createSubscriber,
  createSubscriberInState,
  fullSubscriberBody,
  listEvents,
  listSubscriberIds,
  postSubscriber,
  SUBSCRIBER_SCOPES,
  subscriberBody,
} from '../support/subscriber-factory';
import { createTenantWithToken, type TenantWithToken, type TestApp, tenantSuite } from '../support/test-app';

describe('Subscribers: duplicate rules', () => {
  let t: TestApp;
  let tenant: TenantWithToken;

  tenantSuite(SUBSCRIBER_SCOPES, (suite) => ({ t, tenant } = suite));

  describe('POST /api/v1/subscribers: duplicate rules (409)', () => {
    it('should answer duplicate_subscriber naming external_id with the message the README shows', async () => {
      const first = await createSubscriber(t, tenant.token);
      const res = await postSubscriber(t, tenant.token, subscriberBody({ external_id: first.external_id }));
      expectError(res, 409, 'duplicate_subscriber', 'external_id');
      expect(res.body.error.message).toBe('A subscriber with the supplied external_id already exists.');
      expect(await listSubscriberIds(t, tenant.token, `external_id=${first.external_id}`)).toEqual([
        first.id,
      ]);
    });

    it('should answer duplicate_subscriber naming email for the same email in another case', async () => {
      const email = fullSubscriberBody().email as string;
      await createSubscriber(t, tenant.token, { email });
      const res = await postSubscriber(t, tenant.token, subscriberBody({ email: email.toUpperCase() }));
      expectError(res, 409, 'duplicate_subscriber', 'email');
    });

    it('should keep the email of a cancelled subscriber taken', async () => {
      const email = fullSubscriberBody().email as string;
      await createSubscriberInState(t, tenant.token, 'cancelled', { email });
      expectError(
        await postSubscriber(t, tenant.token, subscriberBody({ email })),
        409,
        'duplicate_subscriber',
        'email',
      );
    });

    it('should let a new subscriber reuse the email of an archived one', async () => {
      const email = fullSubscriberBody().email as string;
      const first = await createSubscriberInState(t, tenant.token, 'archived', { email });
      const res = await postSubscriber(t, tenant.token, subscriberBody({ email: email.toUpperCase() }));
      expectSuccess(res, 201);
      expect(res.body.data.id).not.toBe(first.id);
    });

    it('should not see duplicates across tenants', async () => {
      const body = fullSubscriberBody();
      await createSubscriber(t, tenant.token, body);
      const other = await createTenantWithToken(t, SUBSCRIBER_SCOPES);
      const res = await postSubscriber(t, other.token, { ...body });
      expectSuccess(res, 201);
      expect(res.body.data.external_id).toBe(body.external_id);
    });

    it('should name external_id when the same record is sent again with the same email', async () => {
      const body = fullSubscriberBody();
      await createSubscriber(t, tenant.token, body);
      const res = await postSubscriber(t, tenant.token, { ...body });
      expectError(res, 409, 'duplicate_subscriber', 'external_id');
      expect(res.body.error.message).toBe('A subscriber with the supplied external_id already exists.');
    });

    it('should write no event for a refused duplicate', async () => {
      const fresh = await createTenantWithToken(t, SUBSCRIBER_SCOPES);
      const body = fullSubscriberBody();
      const first = await createSubscriber(t, fresh.token, body);
      const byExternalId = { ...body, email: 'someone.else@example.net' };
      expectError(
        await postSubscriber(t, fresh.token, byExternalId),
        409,
        'duplicate_subscriber',
        'external_id',
      );
      const byEmail = { ...body, external_id: 'crm-other' };
      expectError(await postSubscriber(t, fresh.token, byEmail), 409, 'duplicate_subscriber', 'email');
      const events = await listEvents(t, fresh.token, { type: 'subscriber.*' });
      expect(events.map((event) => [event.type, event.subject_id])).toEqual([
        ['subscriber.created', first.id],
      ]);
      expect(await listSubscriberIds(t, fresh.token)).toEqual([first.id]);
    });
  });
});
