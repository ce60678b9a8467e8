import request from 'supertest';
import { expectSuccess } from './envelope';
import { bearer, randomClientIp } from './factories';
import type { TestApp } from './test-app';

/** A portal session's answer (POST /api/v1/portal/sessions): its token is shown once. */
export interface PortalSessionAnswer {
  id: string;
  token: string;
  subscriber_id: string;
  scope: string;
}

/**
 * Signs the subscriber in to the portal as docs/portal.md describes: an operator's invite (delivery link, its code in
 * the answer), then the public sign-in with that code from an address of its own (so the per-IP limit is not shared).
 */
export async function portalSession(
  t: TestApp,
  operatorToken: string,
  subscriberId: string,
): Promise<PortalSessionAnswer> {
  const invite = await request(t.http)
    .post(`/api/v1/subscribers/${subscriberId}/portal-invites`)
    .set(bearer(operatorToken));
  expectSuccess(invite, 201);
  const session = await request(t.http)
    .post('/api/v1/portal/sessions')
    .set('X-Forwarded-For', randomClientIp())
    .send({ invite_code: invite.body.data.code });
  expectSuccess(session, 201);
  return session.body.data as PortalSessionAnswer;
}
