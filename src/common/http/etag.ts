import { createHash } from 'node:crypto';
import { ApiError } from '../errors/api-error';
import { requestContext } from '../request-context';

/**
 * The strong entity tag of a representation: a hash of the JSON the envelope sends as `data` (never `meta`), so a GET
 * and a write that return the same record state give the same tag (docs/decisions.md, "ETags").
 */
export function etagOf(representation: unknown): string {
  const digest = createHash('sha256').update(JSON.stringify(representation)).digest('base64url');
  return `"${digest.slice(0, 27)}"`;
}

/** The entity tags of an If-Match / If-None-Match value (RFC 9110 8.8.3), or '*'; malformed members are dropped. */
export function parseEntityTags(header: string): string[] | '*' {
  if (header.trim() === '*') {
    return '*';
  }
  return header.match(/(?:W\/)?"[^"]*"/g) ?? [];
}

/**
 * Called by a write with its record locked (in the transaction that writes it), with the record's representation as
 * GET returns it (computed only when If-Match was sent): a request whose If-Match names no current tag is 412
 * precondition_failed, before anything changes. If-Match uses the strong comparison (RFC 9110 13.1.1): a weak tag
 * never matches; '*' matches any existing record. A caller shown only part of the record (a portal session) is
 * compared through that view (RequestContext.recordView), the representation it was given the tag of.
 */
export async function assertIfMatch(representation: () => unknown): Promise<void> {
  const precondition = requestContext.get()?.ifMatch;
  if (!precondition) {
    return;
  }
  precondition.evaluated = true;
  if (precondition.tags === '*') {
    return;
  }
  const view = requestContext.get()?.recordView;
  const record = await representation();
  const current = etagOf(view ? view(record) : record);
  if (!precondition.tags.includes(current)) {
    throw new ApiError(
      'precondition_failed',
      `If-Match does not name the record's current ETag ${current}: it changed since it was read.`,
    );
  }
}
