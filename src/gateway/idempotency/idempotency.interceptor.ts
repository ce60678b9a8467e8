import {
  CallHandler,
  ExecutionContext,
  HttpStatus,
  Injectable,
  Logger,
  NestInterceptor,
  SetMetadata,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ApiExtension } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { catchError, from, mergeMap, Observable, of } from 'rxjs';
import { PrebuiltEnvelope, successEnvelope } from '../../common/envelope/envelope';
import { ApiError } from '../../common/errors/api-error';
import { NEST_METADATA } from '../../common/http/nest-metadata';
import { type IdempotencyClaim, requestContext } from '../../common/request-context';
import { IdempotencyKey } from './idempotency-key.entity';
import { isKeyHeld } from './idempotency.repository';
import { IdempotencyService, type KeyScope, requestFingerprint } from './idempotency.service';
import { replayFormOf } from './replay-form';

const SKIP_IDEMPOTENCY = 'isp:skip-idempotency';

/** For a POST whose answer must never be stored (it carries a secret): a key is ignored there. */
export const SkipIdempotency = () => {
  const mark = SetMetadata(SKIP_IDEMPOTENCY, true);
  const doc = ApiExtension('x-idempotency', false);
  return (target: object, key?: string | symbol, descriptor?: PropertyDescriptor) => {
    mark(target, key!, descriptor!);
    doc(target, key, descriptor);
  };
};

/** Thrown inside the effect's transaction when another request holds the same key; rolls that transaction back. */
class KeyHeldElsewhere extends Error {}

function idempotencyKeyOf(req: Request): string | null {
  const raw = req.headers['x-idempotency-key'] ?? req.headers['idempotency-key'];
  if (raw === undefined) {
    return null;
  }
  const key = Array.isArray(raw) ? raw[0] : raw;
  if (key.length === 0 || key.length > 255) {
    throw new ApiError(
      'invalid_idempotency_key',
      'The idempotency key must be 1 to 255 characters.',
      'X-Idempotency-Key',
    );
  }
  return key;
}

/**
 * Idempotency for every POST (the README's "Idempotency"): same key and body → the stored answer again
 * (Idempotent-Replayed: true); other body → 422; first request still running → 409. Only successful answers are
 * stored, and the key is claimed in the same transaction as the effect (TransactionRunner), so there is exactly one
 * effect under any concurrency.
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  private readonly logger = new Logger('Idempotency');

  constructor(
    private readonly store: IdempotencyService,
    private readonly reflector: Reflector,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const req = context.switchToHttp().getRequest<Request>();
    const ctx = requestContext.get();
    if (req.method !== 'POST' || !ctx?.auth) {
      return next.handle();
    }
    if (
      this.reflector.getAllAndOverride<boolean>(SKIP_IDEMPOTENCY, [context.getHandler(), context.getClass()])
    ) {
      return next.handle();
    }
    const key = idempotencyKeyOf(req);
    if (key === null) {
      return next.handle();
    }

    const scope: KeyScope = { tenantId: ctx.auth.tenantId, tokenId: ctx.auth.tokenId, key };
    const fingerprint = requestFingerprint(req.method, req.originalUrl, req.body);
    const status =
      this.reflector.get<number | undefined>(NEST_METADATA.httpCode, context.getHandler()) ??
      HttpStatus.CREATED;
    const claim: IdempotencyClaim = {
      claimed: false,
      claim: async (manager) => {
        if (claim.claimed) {
          return;
        }
        if (!(await this.store.claim(manager, scope, fingerprint))) {
          throw new KeyHeldElsewhere();
        }
        claim.claimed = true;
      },
      complete: async (manager, answer) => {
        await this.store.complete(manager, scope, status, successEnvelope(replayFormOf(answer)));
        claim.stored = { answer };
      },
      inStatement: (answer) => {
        const body = successEnvelope(replayFormOf(answer));
        return { ctes: (params) => this.store.claimInStatement(params, scope, fingerprint, status, body) };
      },
    };
    // Handed to the handler's transaction explicitly: @Auth() copies it into the AuthContext the handler passes to
    // TransactionRunner.run; nothing reads it from the request context after that.
    ctx.idempotency = claim;
    // Claim first: the key is looked up only when the request did not take its effect under it (the claim found the
    // key taken, or the request failed), so a first use costs no extra statement and a replay still gets its answer.
    return next.handle().pipe(
      mergeMap((payload: unknown) => from(this.ensureStored(req, claim, scope, status, payload))),
      catchError((error: unknown) => {
        if (claim.claimed) {
          throw error;
        }
        return from(this.store.findLive(scope)).pipe(
          mergeMap((row) => {
            if (row) {
              return of(this.answerFromStored(row, fingerprint, context));
            }
            if (error instanceof KeyHeldElsewhere || isKeyHeld(error)) {
              throw new ApiError(
                'idempotency_request_in_progress',
                'A request with this idempotency key is still being processed; retry shortly.',
                'X-Idempotency-Key',
              );
            }
            throw error;
          }),
        );
      }),
    );
  }

  /**
   * The answer was stored by the effect's transaction when the handler answers what that transaction returned. A
   * handler that reshapes the result after its transaction would leave a replay answering something else: store its
   * real answer after the commit (the old crash window) and say so, so the handler gets fixed.
   */
  private async ensureStored(
    req: Request,
    claim: IdempotencyClaim,
    scope: KeyScope,
    status: number,
    payload: unknown,
  ): Promise<unknown> {
    if (claim.claimed && claim.stored?.answer !== payload) {
      this.logger.warn({
        msg: 'idempotent answer stored after the commit',
        method: req.method,
        path: req.path,
      });
      await this.store.completeAfterCommit(scope, status, successEnvelope(replayFormOf(payload)));
    }
    return payload;
  }

  private answerFromStored(
    row: IdempotencyKey,
    fingerprint: string,
    context: ExecutionContext,
  ): PrebuiltEnvelope {
    if (row.fingerprint !== fingerprint) {
      throw new ApiError(
        'idempotency_key_reused',
        'This idempotency key was already used with a different request.',
        'X-Idempotency-Key',
      );
    }
    if (row.responseBody === null || row.responseStatus === null) {
      throw new ApiError(
        'idempotency_request_in_progress',
        'A request with this idempotency key is still being processed; retry shortly.',
        'X-Idempotency-Key',
      );
    }
    const res = context.switchToHttp().getResponse<Response>();
    const body = row.responseBody as { meta?: { request_id?: string } };
    res.status(row.responseStatus);
    res.setHeader('Idempotent-Replayed', 'true');
    // The replay is a request of its own: its id in X-Request-ID and meta; the one that did the work beside it.
    if (body.meta?.request_id) {
      res.setHeader('Original-Request-ID', body.meta.request_id);
    }
    return new PrebuiltEnvelope({ ...body, meta: { ...body.meta, request_id: requestContext.requestId() } });
  }
}
