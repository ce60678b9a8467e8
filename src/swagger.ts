import type { INestApplication } from '@nestjs/common';
import type { Request } from 'express';
import { DocumentBuilder, type OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { API_VERSION } from './common/envelope/envelope';
import { addSuccessExamples, describeParameters } from './common/swagger/document-conventions';
import { toOpenApi31 } from './common/swagger/openapi-31';
import { documentPortalViews } from './common/swagger/portal-views';
import { documentResponses, moveRequestDefaultsToDescriptions } from './common/swagger/response-conventions';
import { splitRequestForms } from './common/swagger/request-forms';
import { completeStringFormats } from './common/swagger/string-formats';
import { applyValidationConstraints } from './common/swagger/validation-constraints';
import { documentWebhooks } from './common/swagger/webhook-payloads';
import { APP_CONFIG, type AppConfig } from './config/app-config';
import { EVENT_TYPES } from './events';

const DESCRIPTION = `The HTTP API an internet service provider runs its business on: subscribers, billing, support
tickets, network provisioning (service plans, services and the orders that carry them to FreeRADIUS), webhooks and an
audit log of events.

Every response is an envelope: \`{success, data, meta:{request_id, api_version}}\` on success (lists add
\`meta.pagination\`), \`{success:false, error:{code, message, field}, meta}\` on failure. Error codes are listed per
endpoint; the whole catalog is in docs/errors.md. Send \`Authorization: Bearer <token>\` on every call but the public
ones; \`GET /api/v1\` states the rate limits before your first real call.

Two answers can come from any path: \`503 service_unavailable\` with \`Retry-After\` (the database timed out or a
deadlock was retried out; listed on every operation that reads the database), and \`405 method_not_allowed\` with
\`Allow\` for a method a path does not take (\`#/components/responses/MethodNotAllowed\`; no operation lists it, since
it answers the operations a path lacks). Webhook deliveries are described under \`webhooks\`, one per event type.`;

/** Tags in the order an integrator meets the domains; Swagger UI and generators list them so. */
const TAGS: [name: string, description: string][] = [
  ['Gateway', 'What the API is, who the caller is, and whether it is up.'],
  ['Subscribers', 'The people and businesses an ISP serves, and their lifecycle.'],
  [
    'Billing',
    'Billing profiles, invoices, payments and their allocation, balances, the ledger, and recurring bill runs.',
  ],
  [
    'Imports',
    'Bulk uploads of subscribers (CSV or JSON Lines), carried out in the background, and their refused rows.',
  ],
  ['Tickets', 'The support desk: tickets, their workflow and SLA, and the conversation with the customer.'],
  ['Provisioning', 'Service plans, subscriber services, and the orders that carry them to the network.'],
  [
    'Network',
    'The NAS registry FreeRADIUS takes its clients from, and the sessions and daily usage its accounting records.',
  ],
  [
    'Automation',
    'The rules that tie billing, the network and support together (dunning, services following their subscriber), per tenant.',
  ],
  ['Webhooks', 'Callback subscriptions, their deliveries and attempts.'],
  [
    'Notifications',
    "Mail to subscribers: what was sent and why, the tenant's templates, and each subscriber's preferences.",
  ],
  ['Events', 'The audit log of every change, readable with a cursor.'],
  [
    'Exports',
    "Subscribers, invoices, transactions and a ledger as CSV files, with their lists' filters, streamed.",
  ],
  [
    'Test clocks',
    "A test tenant's own time, moved forward by advances that carry out everything due in between (docs/test-clocks.md).",
  ],
  [
    'Portal',
    'Subscriber-scoped access: invites, portal sessions bound to one subscriber, and what such a session may call (docs/portal.md).',
  ],
  ['Admin', 'Tenants and API tokens.'],
];

/** The committed document's server: a variable, so a client points it at its own deployment. */
const SERVER_VARIABLE = {
  base_url: {
    default: 'http://localhost:3000',
    description: 'Where your API runs: its origin, with a path prefix if a proxy adds one.',
  },
};

export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  applyValidationConstraints();
  const builder = new DocumentBuilder()
    .setTitle('ISP Subscriber, Billing and Automation API')
    .setDescription(DESCRIPTION)
    .setVersion(API_VERSION)
    .addServer('{base_url}', 'Your server', SERVER_VARIABLE);
  for (const [name, description] of TAGS) {
    builder.addTag(name, description);
  }
  const config = builder
    .addBearerAuth({
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'opaque (isk_…)',
      description:
        'An API token: isk_…. Its scopes: `<domain>:read|write|*`, `events:read`; `admin` manages its own tenant ' +
        '(tokens, data) and implies every data scope there; `platform:admin` manages tenants and may act for any.',
    })
    // Closed by default, like the auth guard: @Public() routes say `security: [{}]` (no credentials) on their own.
    .addSecurityRequirements('bearer')
    .addGlobalParameters(
      {
        name: 'X-Tenant-ID',
        in: 'header',
        required: false,
        description:
          "Tenant id or slug to act for; defaults to the token's own tenant. Only `platform:admin` tokens may " +
          'name another (403 `tenant_forbidden`).',
        schema: { type: 'string', maxLength: 64 },
      },
      {
        name: 'X-Request-ID',
        in: 'header',
        required: false,
        description: 'Your trace id (≤ 128 of A-Z a-z 0-9 . _ : -); echoed back and in meta.request_id.',
        schema: { type: 'string', maxLength: 128 },
      },
    )
    .build();
  config.info.license = { name: 'Proprietary (UNLICENSED): licensed to the ISP that runs it' }; // no licence URL exists
  // One rule for operationIds: the handler's name, a camelCase verbNoun (createSubscriber, listSubscriberLedgerEntries).
  const document = SwaggerModule.createDocument(app, config, {
    operationIdFactory: (_controllerKey, methodKey) => methodKey,
  });
  const described = addSuccessExamples(describeParameters(documentIdempotencyKeys(document)));
  const completed = moveRequestDefaultsToDescriptions(completeStringFormats(documentResponses(described)));
  return documentPortalViews(toOpenApi31(documentWebhooks(splitRequestForms(completed), EVENT_TYPES)));
}

/**
 * The served document names the server that served it: PUBLIC_BASE_URL when set (behind a proxy), else the origin
 * the request came in on, so Swagger's Try-it-out calls this very server on whatever host and port it answered.
 */
function servedDocument(publicBaseUrl: string | null) {
  return <TRequest>(raw: TRequest, _res: unknown, document: OpenAPIObject): OpenAPIObject => {
    const req = raw as unknown as Request;
    const url = publicBaseUrl ?? `${req.protocol}://${req.get('host') ?? 'localhost'}`;
    return {
      ...document,
      servers: [{ url, description: publicBaseUrl ? 'PUBLIC_BASE_URL' : 'This server' }],
    };
  };
}

/** Every POST takes an idempotency key (the interceptor applies to all of them) unless marked @SkipIdempotency(). */
function documentIdempotencyKeys(document: OpenAPIObject): OpenAPIObject {
  for (const path of Object.values(document.paths)) {
    const post = path.post;
    if (!post || (post as { 'x-idempotency'?: boolean })['x-idempotency'] === false) {
      continue;
    }
    post.parameters = [
      ...(post.parameters ?? []),
      {
        name: 'X-Idempotency-Key',
        in: 'header',
        required: false,
        description:
          'A key of your choosing (1–255 characters; `Idempotency-Key` also works) that makes a retry safe: ' +
          'the same key and body within 24 h answer the first result again with `Idempotent-Replayed: true`.',
        schema: { type: 'string', maxLength: 255 },
      },
    ];
  }
  return document;
}

export function setupSwagger(app: INestApplication): void {
  const { publicBaseUrl } = app.get<AppConfig>(APP_CONFIG);
  SwaggerModule.setup('docs', app, () => buildOpenApiDocument(app), {
    jsonDocumentUrl: 'docs/openapi.json',
    yamlDocumentUrl: 'docs/openapi.yaml',
    patchDocumentOnRequest: servedDocument(publicBaseUrl),
    // The token survives a reload of /docs; the box above the operations filters them by tag.
    swaggerOptions: { persistAuthorization: true, filter: true },
  });
}
