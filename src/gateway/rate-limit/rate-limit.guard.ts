import { ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import {
  getOptionsToken,
  getStorageToken,
  ThrottlerGuard,
  type ThrottlerModuleOptions,
  type ThrottlerRequest,
  ThrottlerStorage,
} from '@nestjs/throttler';
import type { Request, Response } from 'express';
import { Clock } from '../../common/clock';
import { ApiError } from '../../common/errors/api-error';
import type { UnroutedLimiter } from '../../common/http/unrouted-limiter';
import { TokensService } from '../tokens/tokens.service';
import { AbuseService } from './abuse.service';
import { PORTAL_TOKEN_PREFIX } from '../../common/auth/portal';
import { PortalSessions } from '../auth/portal-sessions';
import { bearerToken, clientIp } from '../auth/request-credentials';
import { THROTTLER_METADATA } from './throttler-metadata';

const SKIP_DEFAULT = `${THROTTLER_METADATA.skip}default`;
/** Stands for the handler and class of a request no route serves: it carries no metadata, so the defaults apply. */
const UNROUTED = {};

/**
 * The execution context of a request no route serves, for handleRequest (which reads only its HTTP side). Built here
 * because @nestjs/core does not export its own ExecutionContextHost; like it, it names no class and no handler.
 */
function httpContext(req: Request, res: Response): ExecutionContext {
  const args = [req, res];
  const http: ReturnType<ExecutionContext['switchToHttp']> = {
    getRequest: () => req as never,
    getResponse: () => res as never,
    getNext: () => undefined as never,
  };
  const notHttp = (): never => {
    throw new Error('An unrouted request has only an HTTP context.');
  };
  return {
    getType: () => 'http' as never,
    getClass: () => null as never,
    getHandler: () => null as never,
    getArgs: () => args as never,
    getArgByIndex: (index: number) => args[index] as never,
    switchToHttp: () => http,
    switchToRpc: notHttp,
    switchToWs: notHttp,
  };
}

interface RoutePolicy {
  skip: boolean;
  /** The route's limits when they are plain numbers; null sends it through ThrottlerGuard's own per-request path. */
  fixed: Pick<ThrottlerRequest, 'throttler' | 'limit' | 'ttl' | 'blockDuration'> | null;
}

/**
 * The global rate limiter: one budget per token (per subscriber for its portal sessions, per IP for callers without
 * either), shared by every route, and the abuse block checked before it. Sets the IETF RateLimit headers beside the
 * familiar X-RateLimit-* ones.
 */
@Injectable()
export class RateLimitGuard extends ThrottlerGuard implements UnroutedLimiter {
  private readonly policies = new WeakMap<object, RoutePolicy>();

  constructor(
    @Inject(getOptionsToken()) options: ThrottlerModuleOptions,
    @Inject(getStorageToken()) storage: ThrottlerStorage,
    reflector: Reflector,
    private readonly abuse: AbuseService,
    private readonly tokens: TokensService,
    private readonly portalSessions: PortalSessions,
    private readonly clock: Clock,
  ) {
    super(options, storage, reflector);
  }

  override async canActivate(context: ExecutionContext): Promise<boolean> {
    const policy = this.policyFor(context.getHandler(), context.getClass());
    // Routes outside the limit (health probes) are outside the abuse block too.
    if (policy.skip) {
      return true;
    }
    await this.refuseBlocked(context.switchToHttp().getRequest<Request>());
    if (!policy.fixed) {
      return super.canActivate(context);
    }
    return this.count(context, policy.fixed);
  }

  /**
   * A request no route serves gets the same treatment as any other: the abuse block, its budget's headers and count,
   * and a token that does not authenticate counts as a failed authentication (so a 404 is no free token oracle).
   */
  async limitUnrouted(req: Request, res: Response): Promise<void> {
    const policy = this.policyFor(UNROUTED, UNROUTED);
    await this.refuseBlocked(req);
    if (policy.fixed) {
      await this.count(httpContext(req, res), policy.fixed);
    }
    const secret = bearerToken(req);
    if (secret && !(await this.authenticates(req, secret))) {
      await this.abuse.recordAuthFailure(clientIp(req));
    }
  }

  private async refuseBlocked(req: Request): Promise<void> {
    const blockedForS = await this.abuse.blockedForS(clientIp(req));
    if (blockedForS > 0) {
      throw new ApiError(
        'abuse_blocked',
        `Too many failed authentications from this address; try again in ${blockedForS} s.`,
        null,
        { 'Retry-After': String(blockedForS) },
      );
    }
  }

  private count(context: ExecutionContext, fixed: NonNullable<RoutePolicy['fixed']>): Promise<boolean> {
    return this.handleRequest({
      context,
      ...fixed,
      getTracker: this.commonOptions.getTracker!,
      generateKey: this.commonOptions.generateKey!,
    });
  }

  /**
   * A route's limits, read from its metadata once rather than on every request (ThrottlerGuard reads six keys and
   * awaits four resolvers per request). Routes whose limits are computed per request keep the generic path.
   */
  private policyFor(handler: object, classRef: object): RoutePolicy {
    let policy = this.policies.get(handler);
    if (!policy) {
      policy = this.readPolicy(handler, classRef);
      this.policies.set(handler, policy);
    }
    return policy;
  }

  private readPolicy(handler: object, classRef: object): RoutePolicy {
    const read = <T>(key: string) => this.reflector.getAllAndOverride<T>(key, [handler, classRef] as never);
    if (read<boolean>(SKIP_DEFAULT)) {
      return { skip: true, fixed: null };
    }
    const throttler = this.throttlers.length === 1 ? this.throttlers[0] : undefined;
    const name = throttler?.name ?? 'default';
    const limit = read<unknown>(`${THROTTLER_METADATA.limit}${name}`) ?? throttler?.limit;
    const ttl = read<unknown>(`${THROTTLER_METADATA.ttl}${name}`) ?? throttler?.ttl;
    const blockDuration =
      read<unknown>(`${THROTTLER_METADATA.blockDuration}${name}`) ?? throttler?.blockDuration ?? ttl;
    const custom =
      read(`${THROTTLER_METADATA.tracker}${name}`) ?? read(`${THROTTLER_METADATA.keyGenerator}${name}`);
    const fixed =
      throttler &&
      !throttler.skipIf &&
      !this.commonOptions.skipIf &&
      !custom &&
      typeof limit === 'number' &&
      typeof ttl === 'number' &&
      typeof blockDuration === 'number';
    return {
      skip: false,
      fixed: fixed ? { throttler: { ...throttler, name }, limit, ttl, blockDuration } : null,
    };
  }

  /** Whether the secret is a live API token or portal session token. */
  private async authenticates(req: Request, secret: string): Promise<boolean> {
    return secret.startsWith(PORTAL_TOKEN_PREFIX)
      ? (await this.portalSessions.authenticateRequest(req, secret)) !== null
      : (await this.tokens.authenticateRequest(req, secret)) !== null;
  }

  /**
   * A live token's own budget; a live portal session's is its subscriber's (docs/portal.md: all its sessions share
   * one, apart from the tenant's tokens and from the address); everyone else (no token, or one that does not
   * authenticate) counts by address.
   */
  protected override async getTracker(req: Record<string, unknown>): Promise<string> {
    const request = req as unknown as Request;
    const secret = bearerToken(request);
    if (secret?.startsWith(PORTAL_TOKEN_PREFIX)) {
      const session = await this.portalSessions.authenticateRequest(request, secret);
      return session ? `portal:${session.subscriberId}` : `ip:${clientIp(request)}`;
    }
    const token = secret ? await this.tokens.authenticateRequest(request, secret) : null;
    return token ? `token:${token.id}` : `ip:${clientIp(request)}`;
  }

  protected override generateKey(_context: ExecutionContext, tracker: string, name: string): string {
    return `${name}:${tracker}`;
  }

  protected override async handleRequest(props: ThrottlerRequest): Promise<boolean> {
    const { context, limit, ttl, throttler, getTracker, generateKey } = props;
    const req = context.switchToHttp().getRequest<Request>();
    const res = context.switchToHttp().getResponse<Response>();
    const name = throttler.name ?? 'default';
    const key = generateKey(context, await getTracker(req, context), name);
    const record = await this.storageService.increment(key, ttl, limit, props.blockDuration, name);
    const remaining = Math.max(0, limit - record.totalHits);
    const windowS = Math.ceil(ttl / 1000);
    res.setHeader('RateLimit-Policy', `"${name}";q=${limit};w=${windowS}`);
    res.setHeader('RateLimit', `"${name}";r=${remaining};t=${record.timeToExpire}`);
    res.setHeader('X-RateLimit-Limit', String(limit));
    res.setHeader('X-RateLimit-Remaining', String(remaining));
    // GitHub's header name carries GitHub's unit: the epoch second the window resets at, never before it does.
    res.setHeader(
      'X-RateLimit-Reset',
      String(Math.ceil(this.clock.now().getTime() / 1000) + record.timeToExpire),
    );
    if (record.isBlocked) {
      throw new ApiError(
        'rate_limited',
        `Rate limit of ${limit} requests per ${windowS} s exceeded; retry in ${record.timeToExpire} s.`,
        null,
        { 'Retry-After': String(record.timeToExpire) },
      );
    }
    return true;
  }
}
