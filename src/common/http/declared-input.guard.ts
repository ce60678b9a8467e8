import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { DECORATORS } from '@nestjs/swagger';
import type { Request } from 'express';
import { ApiError } from '../errors/api-error';
import type { ErrorCode } from '../errors/error-catalog';
import { NEST_METADATA, ROUTE_PARAM_KIND } from './nest-metadata';

/** What an operation reads of the request besides its path: its body, and which query parameters. */
interface DeclaredInput {
  /** The handler reads the whole Request (it may read anything): nothing is refused. */
  lenient: boolean;
  body: boolean;
  /** Its @ApiBody says `required: false`: no body at all reads as `{}`, so the DTO's optional fields apply. */
  bodyOptional: boolean;
  /** 'dto': a @Query() DTO, whose validation (ApiValidationPipe) refuses unknown names; else the names declared. */
  query: 'dto' | Set<string>;
}

function declaredInput(context: ExecutionContext): DeclaredInput {
  const handler = context.getHandler();
  const args = (Reflect.getMetadata(NEST_METADATA.routeArguments, context.getClass(), handler.name) ??
    {}) as Record<string, { data?: unknown }>;
  const declared: DeclaredInput = {
    lenient: false,
    body: false,
    bodyOptional: false,
    query: new Set(),
  };
  const names = new Set<string>();
  for (const [key, { data }] of Object.entries(args)) {
    const type = Number(key.split(':')[0]);
    if (type === ROUTE_PARAM_KIND.request) {
      declared.lenient = true;
    } else if (type === ROUTE_PARAM_KIND.body) {
      declared.body = true;
    } else if (type === ROUTE_PARAM_KIND.query) {
      if (typeof data === 'string') {
        names.add(data);
      } else {
        declared.query = 'dto';
      }
    }
  }
  const documented = (Reflect.getMetadata(DECORATORS.API_PARAMETERS, handler) ?? []) as {
    in?: string;
    name?: string;
    required?: boolean;
  }[];
  for (const parameter of documented) {
    if (parameter.in === 'query' && parameter.name) {
      names.add(parameter.name);
    }
    if (parameter.in === 'body' && parameter.required === false) {
      declared.bodyOptional = true;
    }
  }
  if (declared.query !== 'dto') {
    declared.query = names;
  }
  return declared;
}

/**
 * After JsonBodyGuard (the body is parsed): an operation refuses what it would otherwise ignore. A query parameter it
 * does not declare is 400 invalid_query, and a non-empty body sent to one that takes none is 400 unknown_field,
 * read from each route's own declarations (its @Body() and @Query() parameters, its @ApiQuery entries), so an
 * operation added later is covered without anyone listing it. A body its @ApiBody makes optional may be left out.
 */
@Injectable()
export class DeclaredInputGuard implements CanActivate {
  private readonly cache = new WeakMap<object, DeclaredInput>();

  canActivate(context: ExecutionContext): boolean {
    const handler = context.getHandler();
    let declared = this.cache.get(handler);
    if (!declared) {
      declared = declaredInput(context);
      this.cache.set(handler, declared);
    }
    if (declared.lenient) {
      return true;
    }
    const req = context.switchToHttp().getRequest<Request>();
    if (declared.query !== 'dto') {
      const known = declared.query;
      const unknown = Object.keys(req.query ?? {}).filter((name) => !known.has(name));
      if (unknown.length > 0) {
        throw refusal(unknown.map((name) => ['invalid_query', `Unknown query parameter ${name}.`, name]));
      }
    }
    if (!declared.body) {
      refuseBody(req.body);
    } else if (declared.bodyOptional && req.body === undefined) {
      req.body = {};
    }
    return true;
  }
}

/** One ApiError for every failure found, the first speaking for all (error.details lists each). */
function refusal(failures: [ErrorCode, string, string | null][]): ApiError {
  const [[code, message, field]] = failures;
  const error = new ApiError(code, message, field);
  error.details = failures.map(([code, message, field]) => ({ code, message, field }));
  return error;
}

/** A body sent to an operation that takes none: `{}` (or `[]`) is as good as none, anything else is refused. */
function refuseBody(body: unknown): void {
  if (body === undefined || body === null) {
    return;
  }
  if (typeof body === 'object' && !Array.isArray(body)) {
    const keys = Object.keys(body);
    if (keys.length > 0) {
      throw refusal(
        keys.map((key) => ['unknown_field', `Unknown field ${key}: this operation takes no body.`, key]),
      );
    }
    return;
  }
  if (Array.isArray(body) && body.length === 0) {
    return;
  }
  throw new ApiError('unknown_field', 'This operation takes no body.');
}
