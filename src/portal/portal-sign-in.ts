import { ApiError } from '../common/errors/api-error';

/** The fields of POST /portal/sessions, as sent. */
export interface SignInFields {
  invite_code?: string;
  tenant?: string;
  email?: string;
  code?: string;
}

/** One of the two ways in (docs/portal.md): an invite code, or tenant + email + an emailed code. */
export type SignInWay =
  { way: 'invite'; inviteCode: string } | { way: 'code'; tenant: string; email: string; code: string };

const CODE_FIELDS = ['tenant', 'email', 'code'] as const;

/**
 * Which way a sign-in takes, exactly one: invite_code alone, or tenant, email and code together. Mixing the two is 422
 * validation_failed naming the first field of the second way that was sent; half of the second way is 400
 * missing_field naming the first one absent; nothing at all is 400 missing_field on invite_code.
 */
export function signInWay(fields: SignInFields): SignInWay {
  const sent = CODE_FIELDS.filter((name) => fields[name] !== undefined);
  if (fields.invite_code !== undefined) {
    if (sent.length > 0) {
      throw new ApiError(
        'validation_failed',
        `${sent[0]} cannot be sent with invite_code: sign in with invite_code alone, or with tenant, email and code.`,
        sent[0],
      );
    }
    return { way: 'invite', inviteCode: fields.invite_code };
  }
  if (sent.length === 0) {
    throw new ApiError(
      'missing_field',
      'invite_code is required, or tenant, email and code (an emailed sign-in code).',
      'invite_code',
    );
  }
  const absent = CODE_FIELDS.find((name) => fields[name] === undefined);
  if (absent !== undefined) {
    throw new ApiError(
      'missing_field',
      `${absent} is required with ${sent.join(' and ')}: send tenant, email and code together.`,
      absent,
    );
  }
  return {
    way: 'code',
    tenant: fields.tenant as string,
    email: fields.email as string,
    code: fields.code as string,
  };
}
