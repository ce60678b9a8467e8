import { createParamDecorator, ExecutionContext, SetMetadata } from '@nestjs/common';
import { ApiError } from '../../common/errors/api-error';
import { AuthContext, requestContext } from '../../common/request-context';
import type { Scope } from './scopes';

export const IS_PUBLIC = 'isp:public';
export const REQUIRED_SCOPES = 'isp:scopes';

/** Opens a route to callers without a token; every other route is closed by default. */
export const Public = () => SetMetadata(IS_PUBLIC, true);

/** The scopes a route requires; a token needs all of them. */
export const RequireScopes = (...scopes: Scope[]) => SetMetadata(REQUIRED_SCOPES, scopes);

/** The authenticated caller: token, scopes and the tenant this request acts for. */
export const Auth = createParamDecorator((_data: unknown, _ctx: ExecutionContext): AuthContext => {
  const auth = requestContext.get()?.auth;
  if (!auth) throw new ApiError('authentication_required', 'A bearer token is required.');
  return auth;
});
