import type { OpenAPIObject } from '@nestjs/swagger';
import { exampleOf } from './document-conventions';

/**
 * The webhook deliveries in the document (issue 27, item 18): an OpenAPI 3.1 `webhooks` entry per event type, whose
 * body is what the webhook worker POSTs (`{id, type, created_at, data}`, src/webhooks/webhook-worker.ts) with the
 * Standard Webhooks headers (signing.ts), and whose `data` is typed per family of events: `data.object` is the record
 * the emitter puts there (a Subscriber for subscriber.*, an Invoice for invoice.*, …), and the keys beside it are
 * the ones that family's emitters add. Runs on the 3.0 schemas, before toOpenApi31.
 */
type Schema = Record<string, unknown>;

interface Family {
  /** The payload schema's name. */
  name: string;
  /** The record in `data.object`: a components.schemas name (before the `Dto` suffix is dropped). */
  object: string;
  /** The record of a type whose emitter puts another one there (subscriber.created answers the created form). */
  objectByType?: Record<string, string>;
  /** Keys beside `object`, each with the types that carry it in its description. */
  details?: Record<string, Schema>;
}

const CHANGED_FIELDS: Schema = {
  type: 'array',
  items: { type: 'string', maxLength: 100 },
  maxItems: 100,
  description: 'On `*.updated`: the request fields that changed (never a secret).',
};
const transition = (what: string): Record<string, Schema> => ({
  from: { type: 'string', maxLength: 32, description: `On \`${what}.status_changed\`: the status before.` },
  to: { type: 'string', maxLength: 32, description: `On \`${what}.status_changed\`: the status after.` },
  reason: {
    type: 'string',
    nullable: true,
    maxLength: 500,
    description: `On \`${what}.status_changed\`: why, as the request or the automation rule gave it.`,
  },
});

/** Families by the event type's prefix (before the dot). */
const FAMILIES: Record<string, Family> = {
  tenant: { name: 'TenantEventPayload', object: 'TenantResponseDto' },
  token: { name: 'TokenEventPayload', object: 'TokenResponseDto' },
  portal: {
    name: 'PortalEventPayload',
    object: 'PortalSessionDto',
    objectByType: {
      'portal.invite_created': 'PortalInviteDto',
      'portal.sign_in_code_requested': 'PortalSignInCodeDto',
    },
  },
  tenant_settings: {
    name: 'TenantSettingsEventPayload',
    object: 'TenantSettingsDto',
    details: { changed_fields: CHANGED_FIELDS },
  },
  subscriber: {
    name: 'SubscriberEventPayload',
    object: 'SubscriberDto',
    objectByType: { 'subscriber.created': 'CreatedSubscriberDto' },
    details: { changed_fields: CHANGED_FIELDS, ...transition('subscriber') },
  },
  billing_profile: {
    name: 'BillingProfileEventPayload',
    object: 'BillingProfileDto',
    details: { changed_fields: CHANGED_FIELDS },
  },
  tax_rate: {
    name: 'TaxRateEventPayload',
    object: 'TaxRateDto',
    details: { changed_fields: CHANGED_FIELDS },
  },
  charge: { name: 'ChargeEventPayload', object: 'ChargeDto' },
  credit_note: { name: 'CreditNoteEventPayload', object: 'CreditNoteDto' },
  invoice: {
    name: 'InvoiceEventPayload',
    object: 'InvoiceDto',
    details: {
      days_overdue: {
        type: 'integer',
        format: 'int32',
        minimum: 1,
        description: 'On `invoice.overdue`: whole days since the due date.',
      },
      offset_days: {
        type: 'integer',
        format: 'int32',
        minimum: -60,
        maximum: 365,
        description:
          "On `invoice.reminder`: the offset of the billing profile's reminder_offsets it is for, in days from the due date (negative: before it).",
      },
      amount_due: {
        type: 'integer',
        format: 'int64',
        minimum: 1,
        maximum: Number.MAX_SAFE_INTEGER,
        description:
          'On `invoice.reminder`: what is really owed on the invoice, in minor units: its amount due less the money received and not yet applied that covers it.',
      },
    },
  },
  billing_run: {
    name: 'BillingRunEventPayload',
    object: 'BillingRunDto',
    details: {
      error: {
        type: 'string',
        maxLength: 2000,
        description: 'On `billing_run.failed`: why the run stopped.',
      },
    },
  },
  import: { name: 'ImportEventPayload', object: 'ImportDto' },
  automation_rule: {
    name: 'AutomationRuleEventPayload',
    object: 'AutomationRuleDto',
    details: { changed_fields: CHANGED_FIELDS },
  },
  transaction: {
    name: 'TransactionEventPayload',
    object: 'TransactionDto',
    details: {
      allocations: {
        type: 'array',
        maxItems: 100,
        description: 'On `transaction.allocated`: the allocations this call made.',
        items: {
          type: 'object',
          required: ['id', 'invoice_id', 'amount'],
          properties: {
            id: { type: 'string', maxLength: 64, description: 'The allocation.' },
            invoice_id: {
              type: 'string',
              maxLength: 64,
              nullable: true,
              description: 'The invoice paid, or null for the balance.',
            },
            amount: {
              type: 'integer',
              format: 'int64',
              minimum: 1,
              maximum: Number.MAX_SAFE_INTEGER,
              description: 'Minor units.',
            },
          },
        },
      },
      refund_id: {
        type: 'string',
        maxLength: 64,
        description: 'On `transaction.refunded`: the refund transaction.',
      },
      amount: {
        type: 'integer',
        format: 'int64',
        minimum: 1,
        maximum: Number.MAX_SAFE_INTEGER,
        description: 'On `transaction.refunded`: the amount refunded, in minor units.',
      },
    },
  },
  ticket: {
    name: 'TicketEventPayload',
    object: 'TicketDto',
    objectByType: { 'ticket.comment_added': 'CommentDto' },
    details: { changed_fields: CHANGED_FIELDS, ...transition('ticket') },
  },
  ticket_settings: {
    name: 'TicketSettingsEventPayload',
    object: 'TicketSettingsDto',
    details: { changed_fields: CHANGED_FIELDS },
  },
  service_plan: {
    name: 'ServicePlanEventPayload',
    object: 'ServicePlanDto',
    details: { changed_fields: CHANGED_FIELDS },
  },
  service: { name: 'ServiceEventPayload', object: 'ServiceDto', details: { changed_fields: CHANGED_FIELDS } },
  provisioning_order: { name: 'ProvisioningOrderEventPayload', object: 'OrderDto' },
  nas: { name: 'NasEventPayload', object: 'NasDto', details: { changed_fields: CHANGED_FIELDS } },
  ip_pool: { name: 'IpPoolEventPayload', object: 'IpPoolDto', details: { changed_fields: CHANGED_FIELDS } },
  network_settings: {
    name: 'NetworkSettingsEventPayload',
    object: 'NetworkSettingsDto',
    details: { changed_fields: CHANGED_FIELDS },
  },
  webhook: { name: 'WebhookEventPayload', object: 'WebhookDto' },
  test_clock: { name: 'TestClockEventPayload', object: 'TestClockDto' },
  notification: { name: 'NotificationEventPayload', object: 'NotificationDto' },
  notification_template: { name: 'NotificationTemplateEventPayload', object: 'NotificationTemplateDto' },
  notification_preferences: {
    name: 'NotificationPreferencesEventPayload',
    object: 'NotificationPreferencesDto',
    details: { changed_fields: CHANGED_FIELDS },
  },
};

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** The Standard Webhooks headers every delivery carries (src/webhooks/signing.ts). */
const DELIVERY_HEADERS: Schema[] = [
  {
    name: 'webhook-id',
    in: 'header',
    required: true,
    description:
      'The event id, the same on every retry of this delivery: drop a second one you already handled.',
    schema: { type: 'string', maxLength: 64, example: 'evt_01JD3Z6W3R4T5Y6U7I8O9P0QAB' },
  },
  {
    name: 'webhook-timestamp',
    in: 'header',
    required: true,
    description: 'Unix seconds when this attempt was signed: refuse one too far from your clock (replays).',
    schema: { type: 'string', pattern: '^[0-9]{1,12}$', maxLength: 12, example: '1795255260' },
  },
  {
    name: 'webhook-signature',
    in: 'header',
    required: true,
    description:
      'Space-separated `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, one per live secret (two for 24 h after ' +
      'a rotation); verify with any Standard Webhooks library and your `whsec_…` secret, on the raw body.',
    schema: {
      type: 'string',
      maxLength: 200,
      example: 'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
    },
  },
];

/** `service_plan.created` → `onServicePlanCreated`: an operationId for the delivery of one event type. */
function operationIdOf(type: string): string {
  return `on${type.replace(/(^|[._])([a-z])/g, (_, _sep: string, c: string) => c.toUpperCase())}`;
}

function familyOf(type: string): Family {
  const family = FAMILIES[type.slice(0, type.indexOf('.'))];
  if (!family) {
    throw new Error(`No webhook payload family for event type ${type}: add it to webhook-payloads.ts`);
  }
  return family;
}

/**
 * The payload schemas of the webhooks (one per family of event types) and a delivery operation per event type, in
 * the document's `webhooks`.
 */
export function documentWebhooks(document: OpenAPIObject, eventTypes: Record<string, string>): OpenAPIObject {
  const schemas = (document.components?.schemas ?? {}) as Record<string, Schema>;
  const types = Object.keys(eventTypes);
  const byFamily = new Map<Family, string[]>();
  for (const type of types) {
    const family = familyOf(type);
    byFamily.set(family, [...(byFamily.get(family) ?? []), type]);
  }
  for (const [family, members] of byFamily) {
    schemas[family.name] = payloadSchema(family, members, schemas);
  }
  const webhooks: Record<string, unknown> = {};
  for (const type of types) {
    webhooks[type] = deliveryOf(document, schemas, type, eventTypes[type]);
  }
  (document as unknown as { webhooks: Record<string, unknown> }).webhooks = webhooks;
  return document;
}

/** What an endpoint receives for the event types `members` of one family: the event's envelope around its record. */
function payloadSchema(family: Family, members: string[], schemas: Record<string, Schema>): Schema {
  const objects = [...new Set(members.map((type) => family.objectByType?.[type] ?? family.object))];
  for (const name of objects) {
    if (!schemas[name]) {
      throw new Error(`Webhook payload ${family.name}: no schema ${name} in the document`);
    }
  }
  const object =
    objects.length === 1
      ? { ...ref(objects[0]), description: 'The record after the change.' }
      : { anyOf: objects.map(ref), description: 'The record after the change (see each type).' };
  return {
    type: 'object',
    description: `What a webhook endpoint receives for ${members.map((t) => `\`${t}\``).join(', ')}.`,
    required: ['id', 'type', 'created_at', 'data'],
    properties: {
      id: {
        type: 'string',
        maxLength: 64,
        example: 'evt_01JD3Z6W3R4T5Y6U7I8O9P0QAB',
        description: 'The event id (also the webhook-id header): the same on every retry.',
      },
      type: { type: 'string', enum: members, description: 'What happened.' },
      created_at: {
        type: 'string',
        format: 'date-time',
        maxLength: 35,
        example: '2026-11-21T10:00:00.000Z',
        description: 'When it happened (not when this attempt was sent).',
      },
      data: {
        type: 'object',
        description: 'The record after the change, and the keys that describe the change.',
        required: ['object'],
        properties: { object, ...(family.details ?? {}) },
      },
    },
  };
}

/** The delivery of one event type, as an operation the receiver implements (with an example of its payload). */
function deliveryOf(
  document: OpenAPIObject,
  schemas: Record<string, Schema>,
  type: string,
  description: string,
): Record<string, unknown> {
  const family = familyOf(type);
  const example = exampleOf(schemas[family.name], document) as Record<string, unknown>;
  const objectName = family.objectByType?.[type] ?? family.object;
  return {
    post: {
      operationId: operationIdOf(type),
      tags: ['Webhooks'],
      summary: `Delivery of \`${type}\``,
      description:
        `${description} Sent to every enabled webhook subscribed to \`${type}\` (or a pattern matching ` +
        'it), signed with its secret; retried on anything but a 2xx or 410, so a receiver must be idempotent ' +
        '(webhook-id).',
      security: [{}],
      parameters: DELIVERY_HEADERS,
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: ref(family.name),
            example: {
              ...example,
              type,
              data: { object: exampleOf(schemas[objectName], document) },
            },
          },
        },
      },
      responses: {
        '200': { description: 'Any 2xx: delivered; this event is not sent to the endpoint again.' },
        '410': { description: 'Gone: the webhook is disabled at once and nothing more is sent to it.' },
      },
    },
  };
}
