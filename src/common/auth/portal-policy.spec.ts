import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ISSUED_INVOICE_STATUSES, PORTAL_OPERATIONS, portalRuleOf } from './portal-policy';

/** The document's operations: operationId and templated path. */
function documented(): Map<string, string> {
  const document = JSON.parse(readFileSync(join(__dirname, '..', '..', '..', 'openapi.json'), 'utf8')) as {
    paths: Record<string, Record<string, { operationId?: string }>>;
  };
  const ids = new Map<string, string>();
  for (const [path, item] of Object.entries(document.paths)) {
    for (const operation of Object.values(item)) {
      if (operation.operationId) {
        ids.set(operation.operationId, path);
      }
    }
  }
  return ids;
}

describe('PORTAL_OPERATIONS', () => {
  const operations = documented();

  it.each(Object.keys(PORTAL_OPERATIONS))('should name %s, an operation of openapi.json', (operationId) => {
    expect(operations.has(operationId)).toBe(true);
  });

  it.each(
    Object.entries(PORTAL_OPERATIONS).filter(
      ([, rule]) => !['list', 'create', 'session'].includes(rule.subject),
    ),
  )('should bind %s by a path id', (operationId) => {
    expect(operations.get(operationId)).toMatch(/\{id\}/);
  });

  it('should allow no operator-only area: tokens, tenants, settings, plans, notifications, webhooks, events', () => {
    for (const [operationId, path] of operations) {
      if (
        /^\/api\/v1\/(tokens|tenants?|tenant|service-plans|notifications|notification-templates|webhooks|events|exports|imports|test-clocks|automation|nas)/.test(
          path,
        )
      ) {
        expect([operationId, portalRuleOf(operationId)]).toEqual([operationId, null]);
      }
    }
  });

  it('should answer null for names that are not its own keys', () => {
    expect(portalRuleOf('constructor')).toBeNull();
    expect(portalRuleOf('toString')).toBeNull();
    expect(portalRuleOf('createToken')).toBeNull();
  });
});

describe('ISSUED_INVOICE_STATUSES', () => {
  it('should be every invoice status of openapi.json but draft, so a new status is decided here', () => {
    const document = JSON.parse(readFileSync(join(__dirname, '..', '..', '..', 'openapi.json'), 'utf8')) as {
      components: { schemas: { Invoice: { properties: { status: { enum: string[] } } } } };
    };
    const statuses = document.components.schemas.Invoice.properties.status.enum;
    expect([...ISSUED_INVOICE_STATUSES].sort()).toEqual(
      statuses.filter((status) => status !== 'draft').sort(),
    );
  });
});
