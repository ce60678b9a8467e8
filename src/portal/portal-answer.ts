import { StreamableFile } from '@nestjs/common';
import { type PortalAnswer, portalView, PORTAL_VIEWS } from '../common/auth/portal-fields';
import { Page, PrebuiltEnvelope, RenderedPage } from '../common/envelope/envelope';

/**
 * A handler's answer as a portal session sees it (docs/portal.md, "What a portal sees"): each record through its
 * view, whether it is the answer, an item of a page (parsed first when Postgres rendered it) or the `data` of an
 * idempotent replay. A document's bytes are sent as they are; anything else a document operation answers is nothing.
 */
export function portalAnswer(answer: PortalAnswer, payload: unknown): unknown {
  if (answer === 'document') {
    return payload instanceof StreamableFile ? payload : null;
  }
  const view = PORTAL_VIEWS[answer];
  if (payload instanceof Page) {
    return payload.map((item) => portalView(view, item));
  }
  if (payload instanceof RenderedPage) {
    const items = JSON.parse(payload.itemsJson) as unknown[];
    return new Page(
      items.map((item) => portalView(view, item)),
      payload.pagination,
    );
  }
  if (payload instanceof PrebuiltEnvelope) {
    const body = payload.body as { data?: unknown };
    return new PrebuiltEnvelope({ ...body, data: portalView(view, body.data) });
  }
  return portalView(view, payload);
}

/** How a portal sees one record of the answer, for comparing an If-Match it sends with the tag it was given. */
export function portalRecordView(answer: PortalAnswer): ((representation: unknown) => unknown) | undefined {
  return answer === 'document'
    ? undefined
    : (representation) => portalView(PORTAL_VIEWS[answer], representation);
}
