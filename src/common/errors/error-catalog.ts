/**
 * The one error catalog. Every failure the API answers carries one of these codes;
 * docs/errors.md is generated from this table and a test keeps the two in step.
 */
export const ERROR_CATALOG = {
  invalid_json: {
    status: 400,
    description: 'The body is not valid JSON, not a JSON object, or nests deeper than 64 levels.',
  },
  missing_field: { status: 400, description: 'A required field is absent (or null).' },
  unknown_field: { status: 400, description: 'The body holds a field the endpoint does not accept.' },
  invalid_query: { status: 400, description: 'A query parameter is unknown or has a wrong value.' },
  invalid_cursor: { status: 400, description: 'The `starting_after` cursor is not one this API issued.' },
  invalid_idempotency_key: {
    status: 400,
    description: 'The idempotency key is empty or longer than 255 characters.',
  },
  authentication_required: { status: 401, description: 'No bearer token was sent.' },
  invalid_token: { status: 401, description: 'The bearer token is unknown, revoked or expired.' },
  insufficient_scope: {
    status: 403,
    description: 'The token lacks a scope the endpoint requires, or one it tries to grant or revoke.',
  },
  tenant_forbidden: {
    status: 403,
    description: 'X-Tenant-ID (or a token request) names a tenant the token may not act for.',
  },
  not_found: { status: 404, description: 'No such record in this tenant.' },
  invalid_invite: {
    status: 401,
    description: 'The portal invite code is unknown, already used or expired (docs/portal.md).',
  },
  invalid_code: {
    status: 401,
    description:
      'The portal sign-in code is wrong, already used, superseded, expired or dead after too many tries (docs/portal.md).',
  },
  route_not_found: { status: 404, description: 'No endpoint has this path.' },
  method_not_allowed: {
    status: 405,
    description: 'The path exists but not with this method; the `Allow` header lists the methods it takes.',
  },
  duplicate_subscriber: {
    status: 409,
    description: 'A subscriber with the same external_id or email exists.',
  },
  duplicate_tenant: { status: 409, description: 'A tenant with this slug exists.' },
  test_clock_advancing: {
    status: 409,
    description:
      'The test clock is advancing (or stopped on a failure): wait for its test_clock.ready event.',
  },
  test_tenant_forbidden: {
    status: 403,
    description: 'A test tenant (one a test clock governs) cannot create test clocks of its own.',
  },
  duplicate_transaction: { status: 409, description: 'A transaction with this external_id exists.' },
  duplicate_ticket: { status: 409, description: 'A ticket with this external_id exists in the tenant.' },
  ticket_closed: {
    status: 409,
    description: 'The ticket is closed or cancelled: it can no longer be changed or commented on.',
  },
  duplicate_service_plan: { status: 409, description: 'A service plan with this name exists in the tenant.' },
  plan_in_use: {
    status: 409,
    description:
      "The plan's speeds or price cannot change while a live service uses it: make a new plan and change_plan.",
  },
  tax_rate_in_use: {
    status: 409,
    description:
      'An invoice has used the tax rate, so what it computes or prints cannot change: archive it (active: false) and create a new one.',
  },
  duplicate_service_username: {
    status: 409,
    description: 'A service that is not terminated already has this PPPoE username.',
  },
  duplicate_ip_address: {
    status: 409,
    description: 'A service that is not terminated already has this static IPv4 address.',
  },
  duplicate_ip_pool: { status: 409, description: 'An IP pool with this name exists in the tenant.' },
  pool_overlap: { status: 409, description: 'The network overlaps another IP pool of the tenant.' },
  pool_in_use: {
    status: 409,
    description:
      'The IP pool holds addresses of services or live services are linked to it: it cannot be deleted (or, dynamic, renamed).',
  },
  address_in_use: {
    status: 409,
    description:
      'The address (or delegated prefix) of the pool is held by another service, or still cooling down after its release.',
  },
  pool_exhausted: {
    status: 409,
    description:
      'The IP pool has no free address (or prefix) left: every one is held, cooling down or excluded.',
  },
  duplicate_nas: {
    status: 409,
    description: 'A NAS with this IPv4 address is registered already (one FreeRADIUS client per address).',
  },
  subscriber_not_serviceable: {
    status: 409,
    description: 'The subscriber is cancelled or archived and takes no new services.',
  },
  no_data_cap: {
    status: 409,
    description: "The service's plan has no data cap, so a top-up would add nothing.",
  },
  order_in_progress: {
    status: 409,
    description: 'Another provisioning order of this service is still open; wait for it or cancel it.',
  },
  invalid_state_transition: {
    status: 409,
    description: 'The record cannot move from its state to the one asked.',
  },
  balance_outstanding: {
    status: 409,
    description:
      'The subscriber still owes money (a balance above 0 in some currency): collect it or write its invoices off first.',
  },
  idempotency_request_in_progress: {
    status: 409,
    description: 'A request with this idempotency key is still being processed.',
  },
  malformed_request: {
    status: 400,
    description:
      "The HTTP request itself is malformed (request line, a header, its framing): Node's parser refused it.",
  },
  precondition_failed: {
    status: 412,
    description:
      'If-Match names no current ETag of the record (it changed since it was read); nothing changed.',
  },
  request_timeout: { status: 408, description: 'The request did not arrive completely in time.' },
  expectation_failed: {
    status: 417,
    description:
      'The request has an `Expect` header other than `100-continue`, the only expectation the server meets.',
  },
  payload_too_large: {
    status: 413,
    description: 'The body is larger than 1 MiB (an import upload: 50 MB).',
  },
  headers_too_large: { status: 431, description: 'The request line and headers exceed 16 KiB.' },
  unsupported_media_type: {
    status: 415,
    description:
      'A body was sent with a Content-Type other than JSON (an import upload: other than CSV, JSON Lines or multipart/form-data), or a charset other than UTF-8.',
  },
  invalid_import_file: {
    status: 400,
    description:
      'An import upload cannot be read: not UTF-8, not CSV (a quote left open), an unknown or repeated column, more columns or a longer field or line than the limits, or no file part.',
  },
  validation_failed: {
    status: 422,
    description: 'A field is present but its value is wrong (type, format, range).',
  },
  address_not_assignable: {
    status: 422,
    description:
      'The address or prefix cannot be handed out: outside the pool, excluded, its gateway, network or broadcast address, inside a dynamic pool, or (IPv6) not a prefix of the pool’s delegated length.',
  },
  invalid_reference: {
    status: 422,
    description: 'A field names a record that does not exist in this tenant.',
  },
  idempotency_key_reused: {
    status: 422,
    description: 'The idempotency key was used before with a different request.',
  },
  allocation_exceeds_unallocated: { status: 422, description: 'Allocations exceed the unallocated amount.' },
  allocation_exceeds_amount_due: {
    status: 422,
    description: "An allocation exceeds the invoice's amount due.",
  },
  currency_mismatch: { status: 422, description: 'The currencies of the records involved differ.' },
  refund_exceeds_refundable: { status: 422, description: 'The refund exceeds what remains refundable.' },
  credit_exceeds_invoice: {
    status: 422,
    description:
      'The credit note asks more than is left to credit: what was invoiced (or the line) less earlier credit notes, tax included.',
  },
  rate_limited: { status: 429, description: 'The rate limit of the token (or IP) is exhausted.' },
  abuse_blocked: {
    status: 429,
    description: 'Too many failed authentications from this IP; blocked for a while.',
  },
  internal_error: {
    status: 500,
    description: 'An unexpected failure; the request id locates it in the logs.',
  },
  service_unavailable: {
    status: 503,
    description:
      'The database is unreachable or too busy (a pool or statement timeout, a deadlock retried out), or the server is still starting: retry after Retry-After.',
  },
} as const satisfies Record<string, { status: number; description: string }>;

export type ErrorCode = keyof typeof ERROR_CATALOG;

export function statusOf(code: ErrorCode): number {
  return ERROR_CATALOG[code].status;
}
