import { notificationFor } from './notification-trigger';

describe('notificationFor: the portal', () => {
  const object = { id: 'pin_1', subscriber_id: 'sub_1' };

  it('mails an invite made with delivery email, and not one handed to the operator', () => {
    expect(
      notificationFor({ type: 'portal.invite_created', data: { object: { ...object, delivery: 'email' } } }),
    ).toEqual({ kind: 'portal_invite', subscriberId: 'sub_1' });
    expect(
      notificationFor({ type: 'portal.invite_created', data: { object: { ...object, delivery: 'link' } } }),
    ).toBeNull();
  });

  it('mails every sign-in code requested', () => {
    expect(notificationFor({ type: 'portal.sign_in_code_requested', data: { object } })).toEqual({
      kind: 'portal_sign_in_code',
      subscriberId: 'sub_1',
    });
    expect(notificationFor({ type: 'portal.signed_in', data: { object } })).toBeNull();
  });
});
