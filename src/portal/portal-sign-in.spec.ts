import { ApiError } from '../common/errors/api-error';
import { signInWay, type SignInFields } from './portal-sign-in';

function refusal(fields: SignInFields): [string, string | null | undefined] {
  try {
    signInWay(fields);
  } catch (error) {
    return [(error as ApiError).code, (error as ApiError).field];
  }
  throw new Error('not refused');
}

describe('signInWay', () => {
  it('takes an invite code alone, or tenant, email and code together', () => {
    expect(signInWay({ invite_code: 'ipi_x' })).toEqual({ way: 'invite', inviteCode: 'ipi_x' });
    expect(signInWay({ tenant: 'acme', email: 'a@b.c', code: '123456' })).toEqual({
      way: 'code',
      tenant: 'acme',
      email: 'a@b.c',
      code: '123456',
    });
  });

  it.each([
    [{ invite_code: 'ipi_x', code: '123456' }, 'validation_failed', 'code'],
    [{ invite_code: 'ipi_x', tenant: 'acme', email: 'a@b.c', code: '1' }, 'validation_failed', 'tenant'],
    [{ tenant: 'acme', email: 'a@b.c' }, 'missing_field', 'code'],
    [{ email: 'a@b.c', code: '123456' }, 'missing_field', 'tenant'],
    [{ code: '123456' }, 'missing_field', 'tenant'],
    [{ tenant: 'acme', code: '123456' }, 'missing_field', 'email'],
    [{}, 'missing_field', 'invite_code'],
  ] as const)('refuses %j as %s on %s', (fields, code, field) => {
    expect(refusal(fields)).toEqual([code, field]);
  });
});
