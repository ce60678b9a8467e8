import { requestContext } from '../request-context';

export const API_VERSION = 'v1';

export interface Pagination {
  limit: number;
  has_more: boolean;
  next_cursor: string | null;
}

/** A page of a list; the envelope puts `items` in `data` and `pagination` in `meta`. */
export class Page<T> {
  constructor(
    readonly items: T[],
    readonly pagination: Pagination,
  ) {}

  map<U>(fn: (item: T) => U): Page<U> {
    return new Page(this.items.map(fn), this.pagination);
  }
}

/**
 * A page whose items Postgres rendered as JSON (renderedPage, src/database/rendered-page.ts): `itemsJson` is their
 * JSON array, which the envelope splices into the answer as it is, so the rows are never parsed into objects nor
 * serialised again here.
 */
export class RenderedPage {
  constructor(
    readonly itemsJson: string,
    readonly pagination: Pagination,
  ) {}
}

export interface Meta {
  request_id: string;
  api_version: string;
  pagination?: Pagination;
}

export function meta(extra: Partial<Meta> = {}): Meta {
  return { request_id: requestContext.requestId() ?? 'req_unknown', api_version: API_VERSION, ...extra };
}

/** An answer already enveloped (an idempotent replay), passed through untouched. */
export class PrebuiltEnvelope {
  constructor(readonly body: object) {}
}

export function successEnvelope(payload: unknown): object {
  if (payload instanceof PrebuiltEnvelope) {
    return payload.body;
  }
  if (payload instanceof Page) {
    return { success: true, data: payload.items, meta: meta({ pagination: payload.pagination }) };
  }
  return { success: true, data: payload ?? null, meta: meta() };
}

/** The success envelope of a RenderedPage, as JSON text: its items spliced in unparsed. */
export function renderedEnvelope(page: RenderedPage): string {
  return `{"success":true,"data":${page.itemsJson},"meta":${JSON.stringify(meta({ pagination: page.pagination }))}}`;
}

export interface ErrorDetailBody {
  code: string;
  message: string;
  field: string | null;
}

/** The failure envelope; `details` (every failure, the first being error's own) only when given. */
export function errorEnvelope(
  code: string,
  message: string,
  field: string | null,
  details?: ErrorDetailBody[],
) {
  return {
    success: false as const,
    error: { code, message, field, ...(details && { details }) },
    meta: meta(),
  };
}
