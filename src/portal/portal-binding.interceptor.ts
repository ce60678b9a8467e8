import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import type { Request } from 'express';
import { from, map, Observable, switchMap } from 'rxjs';
import { PORTAL_SCOPE } from '../common/auth/portal';
import { portalRuleOf, type PortalRule } from '../common/auth/portal-policy';
import { ApiError } from '../common/errors/api-error';
import { requestContext } from '../common/request-context';
import { CreditNotesService, InvoicesService, InvoiceStatus } from '../billing';
import { ServicesService } from '../provisioning';
import { TicketsService } from '../tickets';
import { portalAnswer, portalRecordView } from './portal-answer';

type Json = Record<string, unknown>;

function refused(field: string, why: string): ApiError {
  return new ApiError('insufficient_scope', `A portal session ${why}.`, field, {
    'WWW-Authenticate': `Bearer error="insufficient_scope"`,
  });
}

/**
 * Holds every request of a portal session to its one subscriber (docs/portal.md), before the operation runs, by the
 * rule PORTAL_OPERATIONS gives the operation: the operator's own operations then answer only that subscriber's
 * records. A path id of another subscriber, or of a record of another subscriber, is 404 as if it did not exist; a
 * filter or field naming another subscriber, or a field a portal may not send, is 403 `insufficient_scope`. Its
 * answer then keeps only what PORTAL_VIEWS shows a portal of that record type (docs/portal.md, "What a portal sees").
 */
@Injectable()
export class PortalBindingInterceptor implements NestInterceptor {
  constructor(
    private readonly invoices: InvoicesService,
    private readonly creditNotes: CreditNotesService,
    private readonly services: ServicesService,
    private readonly tickets: TicketsService,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const auth = requestContext.get()?.auth;
    if (!auth?.portal || context.getType() !== 'http') {
      return next.handle();
    }
    const rule = portalRuleOf(context.getHandler().name);
    if (!rule) {
      // The auth guard refused it already; kept so that the binding is deny-by-default on its own too.
      throw refused('operation', `may not call this endpoint (scope ${PORTAL_SCOPE})`);
    }
    const req = context.switchToHttp().getRequest<Request>();
    const store = requestContext.get();
    if (store) {
      store.recordView = portalRecordView(rule.answer);
    }
    return from(this.bind(rule, req, auth.tenantId, auth.portal.subscriberId)).pipe(
      switchMap(() => next.handle()),
      // Deny by default on the way out too: only the fields PORTAL_VIEWS shows reach the portal.
      map((payload) => portalAnswer(rule.answer, payload)),
    );
  }

  private async bind(rule: PortalRule, req: Request, tenantId: string, subscriberId: string): Promise<void> {
    const id = typeof req.params?.id === 'string' ? req.params.id : '';
    switch (rule.subject) {
      case 'subscriber':
        if (id !== subscriberId) {
          throw ApiError.notFound('subscriber', id);
        }
        break;
      case 'invoice':
      case 'credit_note':
      case 'service':
      case 'ticket':
        if ((await this.ownerOf(rule.subject, tenantId, id)) !== subscriberId) {
          throw ApiError.notFound(rule.subject.replace('_', ' '), id);
        }
        break;
      case 'list':
        this.forceQuery(req, { subscriber_id: subscriberId });
        break;
      case 'create':
        this.forceBody(req, { subscriber_id: subscriberId });
        break;
      case 'session':
        break;
    }
    if (rule.forceQuery) {
      this.forceQuery(req, rule.forceQuery);
    }
    for (const [field, narrow] of Object.entries(rule.narrowQuery ?? {})) {
      this.narrowQuery(req, field, narrow.deny, narrow.otherwise);
    }
    if (rule.body) {
      const body = bodyOf(req);
      const allowed = new Set(rule.body);
      const extra = Object.keys(body).find((field) => !allowed.has(field));
      if (extra !== undefined) {
        throw refused(extra, `may not send ${extra} here`);
      }
    }
    if (rule.forceBody) {
      this.forceBody(req, rule.forceBody);
    }
  }

  /** Sets the query's fields; one sent with another value is 403 naming it. */
  private forceQuery(req: Request, fields: Readonly<Record<string, string>>): void {
    const query = { ...(req.query as Json) };
    for (const [field, value] of Object.entries(fields)) {
      if (query[field] !== undefined && query[field] !== value) {
        throw refused(field, `may only ask for ${field}=${value}`);
      }
      query[field] = value;
    }
    // Express 5 parses req.query on every read: the forced query is set on this request for the handler's @Query().
    Object.defineProperty(req, 'query', {
      value: query,
      configurable: true,
      enumerable: true,
      writable: true,
    });
  }

  /** Keeps a comma-list filter off `deny` (asking for one is 403 naming the field); none asked, it is `otherwise`. */
  private narrowQuery(
    req: Request,
    field: string,
    deny: readonly string[],
    otherwise: readonly string[],
  ): void {
    const query = { ...(req.query as Json) };
    const sent = query[field];
    const asked = (Array.isArray(sent) ? sent : [sent])
      .filter((value): value is string => typeof value === 'string')
      .flatMap((value) => value.split(','))
      .map((value) => value.trim());
    const denied = asked.find((value) => deny.includes(value));
    if (denied !== undefined) {
      throw refused(field, `may not ask for ${field}=${denied}`);
    }
    if (sent === undefined) {
      query[field] = otherwise.join(',');
      Object.defineProperty(req, 'query', {
        value: query,
        configurable: true,
        enumerable: true,
        writable: true,
      });
    }
  }

  /** Sets the body's fields; one sent with another value is 403 naming it. */
  private forceBody(req: Request, fields: Readonly<Record<string, unknown>>): void {
    const body = bodyOf(req);
    for (const [field, value] of Object.entries(fields)) {
      if (body[field] !== undefined && body[field] !== value) {
        throw refused(field, `may only send ${field}: ${JSON.stringify(value)}`);
      }
      body[field] = value;
    }
    req.body = body;
  }

  /** The subscriber a record belongs to, through its module's own read (404 when the tenant has no such record). */
  private async ownerOf(
    kind: 'invoice' | 'credit_note' | 'service' | 'ticket',
    tenantId: string,
    id: string,
  ) {
    switch (kind) {
      case 'invoice': {
        // A draft is not issued yet: to its subscriber it does not exist.
        const { invoice } = await this.invoices.getById(tenantId, id);
        return invoice.status === InvoiceStatus.Draft ? null : invoice.subscriberId;
      }
      case 'credit_note':
        return (await this.creditNotes.getById(tenantId, id)).subscriberId;
      case 'service':
        return (await this.services.get(tenantId, id)).subscriberId;
      case 'ticket':
        return (await this.tickets.getDetail(tenantId, id)).subscriber_id;
    }
  }
}

function bodyOf(req: Request): Json {
  const body: unknown = req.body;
  return typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Json) : {};
}
