import { applyDecorators, createParamDecorator, ExecutionContext, SetMetadata } from '@nestjs/common';
import { ApiSecurity } from '@nestjs/swagger';
import { ApiError } from '../errors/api-error';
import { AuthContext, requestContext } from '../request-context';
import type { Scope } from './scopes';

export const IS_PUBLIC = 'isp:public';
export const REQUIRED_SCOPES = 'isp:scopes';

/**
 * Opens a route to callers without a token; every other route is closed by default. The document says so with an
 * empty security requirement (`security: [{}]`: no credentials needed) over its default of a bearer token.
 */
export const Public = () => applyDecorators(SetMetadata(IS_PUBLIC, true), ApiSecurity({}));

/** The scopes a route requires; a token needs all of them. */
export const RequireScopes = (...scopes: Scope[]) => SetMetadata(REQUIRED_SCOPES, scopes);

/**
 * The authenticated caller (token, scopes, the tenant this request acts for), which is also the scope its writes run
 * in: the request id, the token as actor and the idempotency key the interceptor set up, handed to the transaction.
 */
export const Auth = createParamDecorator((_data: unknown, _ctx: ExecutionContext): AuthContext => {
  const context = requestContext.get();
  const auth = context?.auth;
  if (!auth) {
    throw new ApiError('authentication_required', 'A bearer token is required.');
  }
  return {
    ...auth,
    requestId: context.requestId,
    // A portal session's writes are the subscriber's own (docs/portal.md).
    actor: auth.portal
      ? { type: 'subscriber', id: auth.portal.subscriberId }
      : { type: 'token', id: auth.tokenId },
    idempotency: context.idempotency,
  };
});
