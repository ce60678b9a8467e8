import { randomBytes, randomInt } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { SCOPES } from '../../src/common/auth/scopes';
import { encodeCursor } from '../../src/common/pagination';
import { isGeneratedRequestId } from '../support/envelope';
import { startTestApp, type TestApp } from '../support/test-app';
import {
  deleteAllWebhooks,
  fakeRegistrationDns,
  verifies,
  WebhookReceiver,
} from '../support/webhook-receiver';
import { envelopeProblems } from './support/envelope-check';
import { buildWorld, pathFor, uniqueValues, validBodyFor, type World } from './support/fixtures';
import { operations, readOperations, type Operation } from './support/openapi-operations';
import { RawClient, rawExchange, type RawResponse } from './support/raw-client';
import {
  ghostOf,
  bodyForMode,
  idFields,
  RECORD_ID,
  TenantRows,
  urlFields,
  withId,
  withValue,
} from './support/security-isolation';
import { CapturedLog, SecretScanner } from './support/security-secrets';
import { changedTables } from './support/table-checksum';
import { waitFor } from '../support/wait-for';

/**
 * Issue 18 item 6, security, tried from the outside against every route of openapi.json:
 * 1. Secrets are shown once. A token, webhook secrets (registered, replayed, rotated), a NAS secret and PPPoE
 *    passwords are created (and refused ones sent); then every GET route of the document (lists and by-id, on the
 *    fixture world and on the secret-bearing records), the PATCH/POST answers of those records, every page of the
 *    tenant's events and each event by id, and every webhook a real receiver got are searched: no raw secret, in any
 *    body or header, except the one creation answer that must hold it. At rest, each secret is only in the tables
 *    that use it (a token only as its hash; a refused or replaced one nowhere).
 * 2. Logs: both apps log at `trace` (the finest level) into the run's log folder; requests carry the secrets in the
 *    Authorization header (right and wrong) and in bodies (accepted and refused); the captured lines are searched at
 *    the end (and the project teardown searches all suites' logs for every recorded secret).
 * 3. Tenant isolation, a table over openapi.json: tenant B's admin token (every scope but platform:admin) on every
 *    operation with a path id, using tenant A's id, gets the same 404 `not_found` as for an id nobody has and changes
 *    none of A's rows; every list (and every other GET) shows none of A's ids, plain, filtered by A's ids and values,
 *    and paged with a cursor from A's list; a body naming A's record (subscriber_id, plan_id, allocations[].invoice_id…)
 *    is answered as one naming no record; A's natural keys (external_id, email, pppoe_username…) are free for B, no
 *    409 says A has them; B's webhook receives none of A's events; X-Tenant-ID naming A is refused.
 * 4. X-Request-ID with control characters, CR/LF, non-ASCII, 10 KB or past 128 characters is replaced by a generated
 *    id in the header and the envelope, never echoed; a safe one is echoed.
 * 5. Callback URLs: every request field that takes a URL (found in the document's request schemas) refuses private,
 *    loopback, link-local and metadata addresses in every spelling, and names resolving to them, with 422
 *    `validation_failed` on the field, and stores nothing; a public address is accepted.
 * One line sums it up: routes checked for isolation, responses searched for secrets, log lines searched.
 */

type Row = Record<string, unknown>;

interface Envelope {
  success?: boolean;
  data?: unknown;
  error?: { code?: string; message?: string; field?: string | null };
  meta?: { request_id?: string; pagination?: { next_cursor?: string | null; has_more?: boolean } };
}

interface Answer extends RawResponse {
  json: Envelope;
}

const hex = (bytes: number) => randomBytes(bytes).toString('hex');
const randomIp = () => `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;
const endpoint = (op: Operation) => `${op.method.toUpperCase()} ${op.path}`;
const rowOf = (answer: Answer): Row => (answer.json.data ?? {}) as Row;
const rowsOf = (answer: Answer): Row[] =>
  Array.isArray(answer.json.data) ? (answer.json.data as Row[]) : [];

async function call(
  client: RawClient,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<Answer> {
  const raw =
    body === undefined ? null : Buffer.isBuffer(body) ? body : Buffer.from(JSON.stringify(body), 'utf8');
  const res = await client.send({
    method,
    path,
    headers: raw ? { 'Content-Type': 'application/json', ...headers } : headers,
    body: raw,
  });
  let json: Envelope = {};
  try {
    json = JSON.parse(res.text) as Envelope;
  } catch {
    // not JSON: judged by the caller
  }
  return { ...res, json };
}

/** Fails loudly unless the answer is 2xx: for the steps that set the scene. */
function must(what: string, answer: Answer): Answer {
  if (answer.status < 200 || answer.status >= 300) {
    throw new Error(`${what}: ${answer.status} ${answer.text.slice(0, 400)}`);
  }
  return answer;
}

/** The ids a templated path was filled with: `{id}` → `sub_…`. */
function pathIds(op: Operation, path: string): Record<string, string> {
  const template = op.path.split('/');
  const actual = path.split('?')[0].split('/');
  const ids: Record<string, string> = {};
  template.forEach((segment, i) => {
    const name = /^\{(\w+)\}$/.exec(segment)?.[1];
    if (name) {
      ids[name] = decodeURIComponent(actual[i]);
    }
  });
  return ids;
}

/** The query parameters an operation requires, filled from `world` by the prefix of the documented example id. */
function requiredQuery(op: Operation, world: World): string[] {
  return op.queryParams
    .filter((parameter) => parameter.required)
    .map((parameter) => {
      const example = typeof parameter.schema?.example === 'string' ? parameter.schema.example : '';
      const prefix = example.includes('_') ? `${example.split('_')[0]}_` : '';
      const id = Object.values(world.ids).find((value) => prefix && value.startsWith(prefix));
      return `${parameter.name}=${encodeURIComponent(id ?? example)}`;
    });
}

/** The path of a GET with a page of 100 (lists) and its required parameters, in `world`. */
function readPath(op: Operation, world: World, extra: string[] = []): string {
  const query = [...(op.isList ? ['limit=100'] : []), ...requiredQuery(op, world), ...extra];
  return `${pathFor(op, world)}${query.length ? `?${query.join('&')}` : ''}`;
}

const summary = {
  /** Status of each answer to an unsafe X-Request-ID (400: Node's parser refused the request; 200: the app did). */
  requestIdStatuses: {} as Record<string, number>,
  isolationRoutes: new Set<string>(),
  isolationRequests: 0,
  logLines: 0,
};

describe('Security: secrets, tenant isolation, request ids and callbacks (issue 18 item 6)', () => {
  const scanner = new SecretScanner();
  /** Every answer and delivery to search for secrets, with the secrets allowed in it (its own creation answer). */
  const exposures: Array<{
    where: string;
    res: { headers?: RawResponse['headers']; text: string };
    allowed: string[];
  }> = [];
  const expose = (where: string, res: Answer | RawResponse, allowed: string[] = []) => {
    exposures.push({ where, res, allowed });
    return res;
  };

  const mainLog = new CapturedLog('security-main');
  const guardedLog = new CapturedLog('security-guarded');
  let main: TestApp | null = null;
  let guarded: TestApp | null = null;
  let client: RawClient;
  let guardedClient: RawClient;
  let host: string;
  let port: number;
  let receiverA: WebhookReceiver;
  let receiverB: WebhookReceiver;
  let worldA: World;
  let worldB: World;
  /** The tenant of the callbacks cases (on the guarded app), whose webhook the suite deletes when it ends. */
  let callbacksTenant: string | undefined;
  /** Tenant B's own admin token: every scope but platform:admin, no X-Tenant-ID. */
  let asB: Record<string, string>;
  let tokenBId: string;
  /** What the secrets step made in tenant A. */
  const made = {
    tokenId: '',
    token: '',
    tokenAnswer: null as Answer | null,
    webhookId: '',
    webhookSecrets: [] as string[],
    webhookAnswers: [] as Answer[],
    replay: null as Answer | null,
    rotated: null as Answer | null,
    nasId: '',
    nasIp: '',
    nasSecret: '',
    serviceId: '',
    radiusUsername: '',
    password: '',
    hookCreatedAt: '',
  };
  /** A's records as the API answered them (by id), and A's event ids: what B must never see. */
  const recordsA: Row[] = [];
  const eventIdsA = new Set<string>();

  async function listen(app: TestApp): Promise<AddressInfo> {
    await new Promise<void>((resolve) => app.http.listen(0, '127.0.0.1', resolve));
    return app.http.address() as AddressInfo;
  }

  /** Everything that identifies tenant A's data: its tenant id, its records' ids and its events' ids. */
  function fingerprintsA(): string[] {
    const ids = new Set<string>([...Object.values(worldA.ids), ...eventIdsA]);
    for (const id of [made.tokenId, made.webhookId, made.nasId, made.serviceId]) {
      ids.add(id);
    }
    for (const record of recordsA) {
      if (typeof record.id === 'string') {
        ids.add(record.id);
      }
    }
    return [...ids].filter((id) => RECORD_ID.test(id));
  }

  function aIdsIn(text: string): string[] {
    return fingerprintsA().filter((id) => text.includes(id));
  }

  beforeAll(async () => {
    main = await startTestApp(
      {
        LOG_LEVEL: 'trace',
        // Receivers listen on 127.0.0.1: this app may call them. The guarded app below may not.
        WEBHOOK_ALLOW_PRIVATE: 'true',
        WEBHOOK_ALLOW_INSECURE: 'true',
        WEBHOOK_POLL_MS: '100',
        WEBHOOK_RETRY_DELAYS_S: '0.2,0.2',
        WEBHOOK_TIMEOUT_MS: '2000',
        PROVISIONING_POLL_MS: '100',
        BILLING_SCHEDULER_ENABLED: 'false',
        AUTOMATION_ENABLED: 'false',
        // The table checksums hold A's rows still: no notification settles in the background during the walk.
        NOTIFICATION_WORKER_ENABLED: 'false',
      },
      { logDestination: mainLog.stream },
    );
    ({ address: host, port } = await listen(main));
    client = new RawClient(host, port);
    guarded = await startTestApp(
      {
        LOG_LEVEL: 'trace',
        // Plain http allowed, so a refused callback is refused for its address, never for its scheme.
        WEBHOOK_ALLOW_INSECURE: 'true',
        WEBHOOK_WORKER_ENABLED: 'false',
        PROVISIONING_WORKER_ENABLED: 'false',
        BILLING_SCHEDULER_ENABLED: 'false',
        AUTOMATION_ENABLED: 'false',
        // The table checksums hold A's rows still: no notification settles in the background during the walk.
        NOTIFICATION_WORKER_ENABLED: 'false',
      },
      { logDestination: guardedLog.stream },
    );
    const guardedAddress = await listen(guarded);
    guardedClient = new RawClient(guardedAddress.address, guardedAddress.port);
    receiverA = await WebhookReceiver.start();
    receiverB = await WebhookReceiver.start();

    // Tenant B: a world of its own, its admin token, and a receiver for every event it may see.
    worldB = await buildWorld(client, main.adminToken);
    const admin = { Authorization: `Bearer ${main.adminToken}` };
    const issuedB = must(
      'token of B',
      await call(client, 'POST', '/api/v1/tokens', admin, {
        tenant: worldB.tenantSlug,
        name: 'tenant B admin',
        scopes: SCOPES.filter((scope) => scope !== 'platform:admin'),
      }),
    );
    tokenBId = String(rowOf(issuedB).id);
    asB = { Authorization: `Bearer ${scanner.add('token of tenant B', String(rowOf(issuedB).token))}` };
    expose('POST /tokens (creation, tenant B)', issuedB, [String(rowOf(issuedB).token)]);
    const hookB = must(
      'webhook of B',
      await call(client, 'POST', '/api/v1/webhooks', asB, { url: receiverB.url, events: ['*'] }),
    );
    const secretB = scanner.add('webhook secret of tenant B', String(rowOf(hookB).secret), ['webhooks']);
    expose('POST /webhooks (creation, tenant B)', hookB, [secretB]);

    worldA = await buildWorld(client, main.adminToken);
    // The fixtures' services and NASes carry the documented examples; B's refused PATCHes carry the update ones.
    const example = (operationId: string, field: string) =>
      String((operations().find((op) => op.operationId === operationId)?.example as Row)[field]);
    scanner.add(
      'PPPoE password of the fixture services',
      example('createSubscriberService', 'pppoe_password'),
      ['radcheck', 'services'],
    );
    scanner.add('NAS secret of the fixture NASes', example('createNas', 'secret'), ['nas', 'nas_devices']);
    scanner.add('PPPoE password of the update example', example('updateService', 'pppoe_password'));
    scanner.add('NAS secret of the update example', example('updateNas', 'secret'));
    await exerciseSecrets();
    await sweepTenantA();
  }, 180_000);

  /** Creates every kind of secret in tenant A, uses them, and sends refused requests carrying secrets. */
  async function exerciseSecrets(): Promise<void> {
    const asA = worldA.headers;

    // An API token: shown in its creation answer, then used, mistyped, sent without a scheme, revoked.
    const issued = must(
      'token',
      await call(client, 'POST', '/api/v1/tokens', asA, {
        tenant: worldA.tenantSlug,
        name: 'security probe',
        scopes: ['subscribers:read', 'events:read', 'webhooks:read'],
      }),
    );
    made.token = scanner.add('token of tenant A', String(rowOf(issued).token));
    made.tokenId = String(rowOf(issued).id);
    made.tokenAnswer = expose('POST /tokens (creation)', issued, [made.token]) as Answer;
    const withToken = { Authorization: `Bearer ${made.token}` };
    for (const path of ['/api/v1/me', '/api/v1/subscribers?limit=5', '/api/v1/events?limit=5']) {
      expose(`GET ${path} with the token`, must(path, await call(client, 'GET', path, withToken)));
    }
    expose(
      'POST /webhooks with a token lacking webhooks:write (403)',
      await call(client, 'POST', '/api/v1/webhooks', withToken, { url: receiverA.url, events: ['*'] }),
    );
    expose(
      'GET /subscribers with the token in the query too (400)',
      await call(client, 'GET', `/api/v1/subscribers?access_token=${made.token}`, withToken),
    );
    const wrong = scanner.add(
      'a wrong token (last character changed)',
      `${made.token.slice(0, -1)}${made.token.endsWith('A') ? 'B' : 'A'}`,
    );
    expose(
      'GET /me with a wrong token (401)',
      await call(client, 'GET', '/api/v1/me', { Authorization: `Bearer ${wrong}` }),
    );
    expose(
      'GET /me with the token but no scheme (401)',
      await call(client, 'GET', '/api/v1/me', { Authorization: made.token }),
    );
    expose(
      'GET /me with the token as Basic credentials (401)',
      await call(client, 'GET', '/api/v1/me', {
        Authorization: `Basic ${Buffer.from(`user:${made.token}`).toString('base64')}`,
      }),
    );

    // A webhook: its secret at registration, null on an idempotent replay, a new one on rotation.
    const hook = must(
      'webhook',
      await call(client, 'POST', '/api/v1/webhooks', asA, {
        url: receiverA.url,
        events: ['*'],
        description: 'security probe',
      }),
    );
    made.webhookId = String(rowOf(hook).id);
    made.hookCreatedAt = String(rowOf(hook).created_at);
    made.webhookSecrets.push(
      scanner.add('webhook secret (registration, kept 24 h after rotation)', String(rowOf(hook).secret), [
        'webhooks',
      ]),
    );
    made.webhookAnswers.push(expose('POST /webhooks (creation)', hook, [made.webhookSecrets[0]]) as Answer);
    const key = { ...asA, 'Idempotency-Key': `sec-${hex(8)}` };
    const keyed = { url: `${receiverA.url}?keyed`, events: ['nas.*'] };
    const first = must('keyed webhook', await call(client, 'POST', '/api/v1/webhooks', key, keyed));
    made.webhookSecrets.push(
      scanner.add('webhook secret (idempotent registration)', String(rowOf(first).secret), ['webhooks']),
    );
    made.webhookAnswers.push(
      expose('POST /webhooks with an idempotency key (creation)', first, [made.webhookSecrets[1]]) as Answer,
    );
    made.replay = expose(
      'POST /webhooks replayed with the same idempotency key',
      must('keyed replay', await call(client, 'POST', '/api/v1/webhooks', key, keyed)),
    ) as Answer;
    const hookPath = `/api/v1/webhooks/${made.webhookId}`;
    expose(
      'PATCH /webhooks/{id}',
      must('patch webhook', await call(client, 'PATCH', hookPath, asA, { description: 'patched' })),
    );
    expose(
      'POST /webhooks/{id}/test',
      must('test webhook', await call(client, 'POST', `${hookPath}/test`, asA)),
    );
    made.rotated = must('rotate', await call(client, 'POST', `${hookPath}/rotate-secret`, asA));
    made.webhookSecrets.push(
      scanner.add('webhook secret (rotated)', String(rowOf(made.rotated).secret), ['webhooks']),
    );
    expose('POST /webhooks/{id}/rotate-secret', made.rotated, [made.webhookSecrets[2]]);

    // A NAS: its RADIUS secret written, replaced, and refused (spaces; a bad field beside it).
    made.nasIp = randomIp();
    const nasSecret = scanner.add('NAS secret (registration, since replaced)', `nas-${hex(12)}`);
    const nas = must(
      'nas',
      await call(client, 'POST', '/api/v1/nas', asA, {
        name: `sec-${hex(3)}`,
        ip: made.nasIp,
        secret: nasSecret,
      }),
    );
    made.nasId = String(rowOf(nas).id);
    expose('POST /nas', nas);
    made.nasSecret = scanner.add('NAS secret (current)', `nas-${hex(12)}`, ['nas', 'nas_devices']);
    expose(
      'PATCH /nas/{id} with a new secret',
      must(
        'patch nas',
        await call(client, 'PATCH', `/api/v1/nas/${made.nasId}`, asA, { secret: made.nasSecret }),
      ),
    );
    const spaced = scanner.add('NAS secret (refused: spaces)', `bad secret ${hex(6)}`);
    expose(
      'POST /nas with a secret holding spaces (422)',
      await call(client, 'POST', '/api/v1/nas', asA, { name: 'sec-bad', ip: randomIp(), secret: spaced }),
    );
    const besideBad = scanner.add('NAS secret (beside a bad coa_port)', `nas-${hex(12)}`);
    expose(
      'PATCH /nas/{id} with a secret and a bad coa_port (422)',
      await call(client, 'PATCH', `/api/v1/nas/${made.nasId}`, asA, { secret: besideBad, coa_port: 'x' }),
    );

    // The tenant's SMTP password (issue 31): written, kept by a PATCH leaving it out, and refused beside a bad port.
    const smtpPassword = scanner.add('SMTP password (tenant settings)', `smtp-${hex(12)}`, [
      'tenant_settings',
    ]);
    const mail = {
      host: '93.184.215.14',
      port: 587,
      tls: 'starttls',
      user: 'billing@security.example',
      password: smtpPassword,
      from: 'Security Probe <billing@security.example>',
    };
    const settingsPath = '/api/v1/tenant/settings';
    expose(
      'PATCH /tenant/settings with an SMTP password',
      must('mail settings', await call(client, 'PATCH', settingsPath, asA, { mail })),
    );
    expose(
      'PATCH /tenant/settings leaving the SMTP password out',
      must('mail port', await call(client, 'PATCH', settingsPath, asA, { mail: { port: 2525 } })),
    );
    expose('GET /tenant/settings', must('get settings', await call(client, 'GET', settingsPath, asA)));
    const smtpRefused = scanner.add('SMTP password (beside a bad port)', `smtp-${hex(12)}`);
    expose(
      'PATCH /tenant/settings with an SMTP password and a bad port (422)',
      await call(client, 'PATCH', settingsPath, asA, { mail: { password: smtpRefused, port: 0 } }),
    );

    // A service: its PPPoE password at creation and on PATCH, and refused bodies carrying passwords.
    const subscriberPath = `/api/v1/subscribers/${worldA.ids.subscribers}/services`;
    const serviceBody = (password: string, extra: Row = {}) => ({
      plan_id: worldA.ids['service-plans'],
      pppoe_username: uniqueValues().pppoe_username,
      pppoe_password: password,
      ...extra,
    });
    const created = must(
      'service',
      await call(
        client,
        'POST',
        subscriberPath,
        asA,
        serviceBody(scanner.add('PPPoE password (creation, since changed)', `pw-${hex(12)}`)),
      ),
    );
    const service = rowOf(created).service as Row;
    made.serviceId = String(service.id);
    made.radiusUsername = String(service.radius_username);
    expose('POST /subscribers/{id}/services', created);
    await ordersDone(made.serviceId);
    made.password = scanner.add('PPPoE password (current)', `pw-${hex(12)}`, ['radcheck', 'services']);
    expose(
      'PATCH /services/{id} with a new password',
      must(
        'patch service',
        await call(client, 'PATCH', `/api/v1/services/${made.serviceId}`, asA, {
          pppoe_password: made.password,
        }),
      ),
    );
    await ordersDone(made.serviceId);
    expose(
      'POST /subscribers/{id}/services with a password and a bad static_ipv4 (422)',
      await call(
        client,
        'POST',
        subscriberPath,
        asA,
        serviceBody(scanner.add('PPPoE password (beside a bad address)', `pw-${hex(12)}`), {
          static_ipv4: 'not-an-address',
        }),
      ),
    );
    expose(
      'POST /subscribers/{id}/services with a non-ASCII password (422)',
      await call(
        client,
        'POST',
        subscriberPath,
        asA,
        serviceBody(scanner.add('PPPoE password (refused: not ASCII)', `pw-\u00e9-${hex(8)}`)),
      ),
    );
    expose(
      'PATCH /services/{id} with a password and an unknown field (400)',
      await call(client, 'PATCH', `/api/v1/services/${made.serviceId}`, asA, {
        pppoe_password: scanner.add('PPPoE password (beside an unknown field)', `pw-${hex(12)}`),
        surprise: true,
      }),
    );
    const inBrokenJson = scanner.add('PPPoE password (in invalid JSON)', `pw-${hex(12)}`);
    expose(
      'PATCH /services/{id} with invalid JSON around a password (400)',
      await call(
        client,
        'PATCH',
        `/api/v1/services/${made.serviceId}`,
        asA,
        Buffer.from(`{"pppoe_password":"${inBrokenJson}",}`),
      ),
    );

    // The token's last use: revoked, then refused.
    expose(
      'DELETE /tokens/{id}',
      must('revoke', await call(client, 'DELETE', `/api/v1/tokens/${made.tokenId}`, asA)),
    );
    expose('GET /me with the revoked token (401)', await call(client, 'GET', '/api/v1/me', withToken));
  }

  /** Waits until every provisioning order of a service is out of acknowledged/in_progress. */
  async function ordersDone(serviceId: string): Promise<void> {
    await waitFor(
      async () => {
        const list = await call(
          client,
          'GET',
          `/api/v1/provisioning-orders?service_id=${serviceId}&limit=100`,
          worldA.headers,
        );
        const open = rowsOf(list).filter((order) =>
          ['acknowledged', 'in_progress'].includes(String(order.status)),
        );
        return list.status === 200 && open.length === 0 ? true : undefined;
      },
      { timeout: 20_000, interval: 50, what: `provisioning orders of ${serviceId} done` },
    );
  }

  /**
   * Every GET of the document for tenant A, on the fixture world and again on the secret-bearing records; every page
   * of A's events and each event by id; then every delivery the receiver got for events after its registration.
   */
  async function sweepTenantA(): Promise<void> {
    const secretWorld: World = {
      ...worldA,
      ids: {
        ...worldA.ids,
        tokens: made.tokenId,
        webhooks: made.webhookId,
        nas: made.nasId,
        services: made.serviceId,
      },
    };
    for (const [label, world] of [
      ['fixture records', worldA],
      ['secret-bearing records', secretWorld],
    ] as const) {
      for (const op of readOperations()) {
        const path = readPath(op, world);
        const res = expose(
          `${endpoint(op)} (${label})`,
          await call(client, 'GET', path, world.headers),
        ) as Answer;
        // A's own records (the platform's tenant list is everyone's, not A's).
        const own = (record: Row) =>
          record.tenant_id === undefined || record.tenant_id === worldA.ids.tenants;
        if (op.path.startsWith('/api/v1/tenants')) {
          continue;
        }
        if (res.status === 200 && !op.isList && op.pathParams.length > 0) {
          recordsA.push(...[rowOf(res)].filter(own));
        }
        recordsA.push(...rowsOf(res).slice(0, 5).filter(own));
      }
    }
    let cursor: string | null | undefined = null;
    let pages = 0;
    do {
      const page = await call(
        client,
        'GET',
        `/api/v1/events?limit=100${cursor ? `&starting_after=${cursor}` : ''}`,
        worldA.headers,
      );
      expose(`GET /events page ${++pages}`, must('events page', page));
      for (const event of rowsOf(page)) {
        eventIdsA.add(String(event.id));
      }
      cursor = page.json.meta?.pagination?.next_cursor;
    } while (cursor);
    for (const id of eventIdsA) {
      expose(`GET /events/${id}`, await call(client, 'GET', `/api/v1/events/${id}`, worldA.headers));
    }

    // Every event after the receiver's registration reaches it (a rotation, a test ping, NAS, service, token…).
    const events = await allEvents(worldA.headers);
    const expected = events
      .filter((event) => String(event.created_at) > made.hookCreatedAt)
      .map((e) => String(e.id));
    await waitFor(
      () => Promise.resolve(expected.every((id) => receiverA.eventIds().has(id)) ? true : undefined),
      {
        timeout: 30_000,
        interval: 50,
        what: `receiver A got the ${expected.length} events after its registration`,
      },
    );
    for (const req of receiverA.requests) {
      expose(`webhook delivery ${req.body?.type ?? '?'} ${String(req.headers['webhook-id'])}`, {
        status: 200,
        headers: req.headers,
        text: req.rawBody,
      });
    }
  }

  async function allEvents(headers: Record<string, string>): Promise<Row[]> {
    const all: Row[] = [];
    let cursor: string | null | undefined = null;
    do {
      const page = must(
        'events',
        await call(
          client,
          'GET',
          `/api/v1/events?limit=100${cursor ? `&starting_after=${cursor}` : ''}`,
          headers,
        ),
      );
      all.push(...rowsOf(page));
      cursor = page.json.meta?.pagination?.next_cursor;
    } while (cursor);
    return all;
  }

  afterAll(async () => {
    jest.restoreAllMocks();
    // No subscription of this suite may outlive it: a later suite's worker on the same database would spend its
    // time on deliveries to receivers that are gone.
    for (const world of [worldA, worldB]) {
      if (main && world) {
        await deleteAllWebhooks(main.http, main.adminToken, world.ids.tenants);
      }
    }
    if (guarded && callbacksTenant) {
      await deleteAllWebhooks(guarded.http, guarded.adminToken, callbacksTenant);
    }
    client?.close();
    guardedClient?.close();
    await main?.close();
    await guarded?.close();
    await mainLog.close();
    await guardedLog.close();
    await receiverA?.close();
    await receiverB?.close();
    process.stdout.write(
      `\nsecurity: ${summary.isolationRoutes.size} routes checked for isolation (${summary.isolationRequests} ` +
        `requests), ${scanner.scanned} responses scanned for ${scanner.secrets.length} secrets, ` +
        `${summary.logLines} log lines scanned; unsafe X-Request-IDs answered ` +
        `${JSON.stringify(summary.requestIdStatuses)}, each with a generated id\n`,
    );
  });

  describe('secrets are shown once, in their creation answer', () => {
    it('shows the raw token and webhook secrets in their creation answers (the search can find them)', () => {
      expect(made.tokenAnswer?.status).toBe(201);
      expect(String(rowOf(made.tokenAnswer as Answer).token)).toBe(made.token);
      expect(scanner.find(made.tokenAnswer?.text ?? '').map((s) => s.name)).toContain('token of tenant A');
      made.webhookAnswers.forEach((answer, i) => {
        expect(answer.status).toBe(201);
        expect(answer.text).toContain(made.webhookSecrets[i]);
      });
      expect(String(rowOf(made.rotated as Answer).secret)).toBe(made.webhookSecrets[2]);
      expect(made.webhookSecrets[2]).not.toBe(made.webhookSecrets[0]);
      // A replay answers the subscription without its secret (the key never stores it).
      expect(made.replay?.status).toBe(201);
      expect(rowOf(made.replay as Answer).secret).toBeNull();
      expect(rowOf(made.replay as Answer).id).toBe(rowOf(made.webhookAnswers[1]).id);
    });

    it('keeps the write-only secrets where they are used: the NAS registry, the service and RADIUS', async () => {
      const ds = (main as TestApp).dataSource;
      const [nas] = await ds.query<Row[]>('SELECT secret FROM nas_devices WHERE id = $1', [made.nasId]);
      const [radiusNas] = await ds.query<Row[]>('SELECT secret FROM nas WHERE nasname = $1', [made.nasIp]);
      const [service] = await ds.query<Row[]>('SELECT pppoe_password FROM services WHERE id = $1', [
        made.serviceId,
      ]);
      const radcheck = await ds.query<Row[]>(
        `SELECT value FROM radcheck WHERE username = $1 AND attribute = 'Cleartext-Password'`,
        [made.radiusUsername],
      );
      expect({
        nas: nas?.secret,
        radiusNas: radiusNas?.secret,
        service: service?.pppoe_password,
        radcheck: radcheck.map((row) => row.value),
      }).toEqual({
        nas: made.nasSecret,
        radiusNas: made.nasSecret,
        service: made.password,
        radcheck: [made.password],
      });
      // Deliveries are signed with the rotated secret: the receiver got the real thing.
      expect(receiverA.requests.some((req) => verifies(made.webhookSecrets[2], req))).toBe(true);
    });

    it('refused the requests meant to fail with the status their label names', () => {
      const expected = exposures
        .map(({ where, res }) => ({
          where,
          want: /\((\d{3})\)$/.exec(where)?.[1],
          got: (res as Answer).status,
        }))
        .filter((e) => e.want !== undefined);
      expect(expected.length).toBeGreaterThanOrEqual(12);
      expect(expected.filter((e) => String(e.got) !== e.want)).toEqual([]);
    });

    it('shows no raw secret in any other answer, header, event or delivered webhook', () => {
      for (const { where, res, allowed } of exposures) {
        scanner.scan(where, res, allowed);
      }
      const kinds = new Set(exposures.map((e) => e.where.split(' ')[0]));
      expect([...kinds]).toEqual(expect.arrayContaining(['GET', 'POST', 'PATCH', 'DELETE', 'webhook']));
      expect(exposures.filter((e) => e.where.startsWith('webhook delivery')).length).toBeGreaterThan(5);
      expect(scanner.report()).toEqual([]);
    });
  });

  describe('tenant B sees nothing of tenant A', () => {
    let rowsA: TenantRows;

    beforeAll(async () => {
      // A's and B's example.com subscriptions off, so nothing of A moves by itself while B attacks it.
      for (const world of [worldA, worldB]) {
        must(
          'disable example webhook',
          await call(client, 'PATCH', `/api/v1/webhooks/${world.ids.webhooks}`, world.headers, {
            enabled: false,
          }),
        );
      }
      rowsA = new TenantRows((main as TestApp).dataSource, worldA.ids.tenants, worldA.tenantSlug);
      await rowsA.init();
      await rowsA.settled();
    }, 60_000);

    it("answers B's token on every operation with A's path id as for an id nobody has: 404, nothing changed", async () => {
      const problems: string[] = [];
      const seen: Record<string, number> = {};
      let before = await rowsA.settled();
      for (const op of operations().filter((o) => o.pathParams.length > 0)) {
        const key = endpoint(op);
        summary.isolationRoutes.add(key);
        const path = pathFor(op, worldA);
        const ids = pathIds(op, path);
        if (Object.values(ids).some((id) => id.startsWith('unknown_'))) {
          problems.push(`${key}: the fixture world has no id for ${JSON.stringify(ids)}`);
          continue;
        }
        const body = ['post', 'patch', 'put'].includes(op.method)
          ? (validBodyFor(op, worldA) ?? (op.bodySchema ? {} : undefined))
          : undefined;
        const extra = requiredQuery(op, worldA);
        const query = extra.length ? `?${extra.join('&')}` : '';
        const res = await call(client, op.method.toUpperCase(), `${path}${query}`, asB, body);
        summary.isolationRequests++;
        seen[key] = res.status;
        const named = Object.values(ids).every((id) => !RECORD_ID.test(id));
        for (const problem of envelopeProblems(res)) {
          problems.push(`${key}: ${problem}`);
        }
        if (named) {
          // A name every tenant has (an automation rule): B acts on its own, never on A's.
          if (res.status >= 500) {
            problems.push(`${key} on the shared name ${JSON.stringify(ids)}: ${res.status}`);
          }
        } else {
          const ghosts = Object.fromEntries(Object.entries(ids).map(([name, id]) => [name, ghostOf(id)]));
          const ghost = await call(
            client,
            op.method.toUpperCase(),
            `${pathFor(op, worldA, ghosts)}${query}`,
            asB,
            body,
          );
          summary.isolationRequests++;
          const shown = (answer: Answer, map: Record<string, string>) => {
            let message = answer.json.error?.message ?? '';
            for (const [name, id] of Object.entries(map)) {
              message = message.split(id).join(`{${name}}`);
            }
            return `${answer.status} ${answer.json.error?.code} ${message}`;
          };
          if (res.status !== 404 || res.json.error?.code !== 'not_found') {
            problems.push(`${key} with A's ${JSON.stringify(ids)}: ${res.status} ${res.text.slice(0, 200)}`);
          } else if (shown(res, ids) !== shown(ghost, ghosts)) {
            problems.push(
              `${key}: A's id answers "${shown(res, ids)}", an unknown one "${shown(ghost, ghosts)}"`,
            );
          }
        }
        const leaked = aIdsIn(`${JSON.stringify(res.headers)}${res.text}`).filter(
          (id) => !Object.values(ids).includes(id),
        );
        if (leaked.length > 0) {
          problems.push(`${key}: the answer names A's ${leaked.join(', ')}`);
        }
        const changed = changedTables(before, await rowsA.current());
        if (changed.length > 0) {
          problems.push(`${key} (${res.status}) changed A's rows in ${changed.join(', ')}`);
          before = await rowsA.settled();
        }
      }
      const tally: Record<string, number> = {};
      Object.values(seen).forEach((status) => (tally[status] = (tally[status] ?? 0) + 1));
      process.stdout.write(
        `security: ${Object.keys(seen).length} operations with a path id, as B on A's ids: ${JSON.stringify(tally)}\n`,
      );
      // The routes the issue names are in the table.
      expect(seen).toMatchObject({
        'GET /api/v1/services/{id}/sessions': 404,
        'GET /api/v1/services/{id}/usage': 404,
        'GET /api/v1/events/{id}': 404,
        'POST /api/v1/webhooks/{id}/test': 404,
        'DELETE /api/v1/tokens/{id}': 404,
        'DELETE /api/v1/test-clocks/{id}': 404,
      });
      expect(problems).toEqual([]);
      // The checksum sees A's changes: an update by A's own admin moves it.
      const update = operations().find((o) => o.operationId === 'updateSubscriber') as Operation;
      must(
        'update by A',
        await call(client, 'PATCH', pathFor(update, worldA), worldA.headers, validBodyFor(update, worldA)),
      );
      expect(changedTables(before, await rowsA.current())).toContain('subscribers');
    }, 120_000);

    it("shows none of A's ids on any GET: lists plain, filtered by A's ids and values, and paged by A's cursor", async () => {
      const problems: string[] = [];
      const stats = { lists: 0, filtered: 0, filtered200: 0, cursors: 0, issuedCursors: 0, ownRows: 0 };
      /** Passes when allowed and naming none of A's ids, but the one B sent in a refusal (which may quote it). */
      const judge = (label: string, res: Answer, allowed: (r: Answer) => boolean, sent = '') => {
        summary.isolationRequests++;
        for (const problem of envelopeProblems(res)) {
          problems.push(`${label}: ${problem}`);
        }
        if (!allowed(res)) {
          problems.push(`${label}: ${res.status} ${res.text.slice(0, 200)}`);
        }
        const leaked = aIdsIn(res.text).filter((id) => id !== sent || res.status < 300);
        if (leaked.length > 0) {
          problems.push(`${label}: B sees A's ${leaked.slice(0, 5).join(', ')}`);
        }
      };
      const valuesOf = (name: string): string[] => {
        const values = new Set<string>();
        for (const record of recordsA) {
          const value = record[name];
          if (typeof value === 'string' && value.length >= 3) {
            values.add(value);
          }
        }
        if (name.endsWith('_id')) {
          // Every id of A's records (event ids only where the filter is about events).
          fingerprintsA()
            .filter((id) => name === 'event_id' || !eventIdsA.has(id))
            .forEach((id) => values.add(id));
        }
        return [...values];
      };
      const ownIdsB = new Set(Object.values(worldB.ids));
      for (const op of readOperations().filter((o) => o.pathParams.length === 0 || o.isList)) {
        const key = endpoint(op);
        summary.isolationRoutes.add(key);
        const plain = await call(client, 'GET', readPath(op, worldB), asB);
        judge(`${key} plain`, plain, (r) => r.status < 500);
        if (!op.isList) {
          continue;
        }
        stats.lists++;
        if (rowsOf(plain).some((row) => ownIdsB.has(String(row.id)))) {
          stats.ownRows++;
        }
        const enumerated = (name: string) => {
          const schema = op.queryParams.find((p) => p.name === name)?.schema;
          return Boolean(schema?.enum ?? schema?.items?.enum);
        };
        const filters = op.queryParams
          .map((p) => p.name)
          .filter((name) => !['limit', 'starting_after', 'created_gte', 'created_lt'].includes(name))
          .filter((name) => !enumerated(name));
        for (const name of filters) {
          for (const value of valuesOf(name)) {
            const others = requiredQuery(op, worldB).filter((q) => !q.startsWith(`${name}=`));
            const path = `${pathFor(op, worldB)}?${['limit=100', ...others, `${name}=${encodeURIComponent(value)}`].join('&')}`;
            const res = await call(client, 'GET', path, asB);
            stats.filtered++;
            if (res.status === 200) {
              stats.filtered200++;
            }
            // 200 (B's rows only), 400 (a value of the wrong shape) or the 404 any unknown parent id gets.
            judge(
              `${key} ?${name}=${value}`,
              res,
              (r) =>
                r.status === 200 ||
                r.status === 400 ||
                (r.status === 404 && r.json.error?.code === 'not_found'),
              value,
            );
          }
        }
        // A cursor from A's own list of this route: one the API issued when A has a second page, else one built from
        // A's first row exactly as the API builds them.
        const listA = await call(
          client,
          'GET',
          `${readPath(op, worldA).replace('limit=100', 'limit=1')}`,
          worldA.headers,
        );
        const firstA = rowsOf(listA)[0];
        const issued = listA.json.meta?.pagination?.next_cursor;
        const cursor =
          issued ??
          (typeof firstA?.created_at === 'string'
            ? encodeCursor(new Date(firstA.created_at), String(firstA.id))
            : null);
        if (cursor) {
          stats.cursors++;
          stats.issuedCursors += issued ? 1 : 0;
          const res = await call(client, 'GET', readPath(op, worldB, [`starting_after=${cursor}`]), asB);
          // B's own rows, or invalid_cursor; a route B may not read at all refuses it as it refused the plain list.
          judge(
            `${key} with A's cursor`,
            res,
            (r) =>
              r.status === 200 ||
              (r.status === 400 && r.json.error?.code === 'invalid_cursor') ||
              (r.status === plain.status && r.status >= 400),
          );
        }
      }
      // All of B's events, every page.
      for (const event of await allEvents(asB)) {
        summary.isolationRequests++;
        if (eventIdsA.has(String(event.id)) || aIdsIn(JSON.stringify(event)).length > 0) {
          problems.push(
            `GET /events as B: event ${String(event.id)} names A's ${aIdsIn(JSON.stringify(event)).join(', ')}`,
          );
        }
      }
      process.stdout.write(`security: lists as B ${JSON.stringify(stats)}\n`);
      expect(problems).toEqual([]);
      // The table bit: B's lists hold B's rows, filters and A's cursors were really applied.
      expect(stats.ownRows).toBeGreaterThan(10);
      expect(stats.filtered200).toBeGreaterThan(20);
      expect(stats.cursors).toBeGreaterThan(10);
      expect(stats.issuedCursors).toBeGreaterThan(0);
    }, 120_000);

    it("answers A's ids in B's request bodies as ids nobody has, and writes nothing of A's", async () => {
      const before = await rowsA.settled();
      const problems: string[] = [];
      const table: string[] = [];
      const fields = idFields();
      for (const field of fields) {
        const key = `${endpoint(field.op)} ${field.path}`;
        summary.isolationRoutes.add(endpoint(field.op));
        const idA = Object.values(worldA.ids).find((id) => id.startsWith(field.prefix));
        if (!idA) {
          problems.push(`${key}: the fixture world has no ${field.prefix} record`);
          continue;
        }
        // The valid body B would send for its own records; an array the example left out replaces it (the
        // example chose the other form, e.g. allocate by strategy instead of by invoice).
        const top = field.path.split(/[.[]/)[0];
        const valid = validBodyFor(field.op, worldB) ?? {};
        let base = top in valid || !field.path.includes('[]') ? valid : {};
        const path = pathFor(field.op, worldB);
        const send = (id: string) =>
          call(client, field.op.method.toUpperCase(), path, asB, withId(base, field, id));
        let res = await send(idA);
        // A field that counts in one mode only (plan_id with change_plan) is tried in that mode.
        const mode =
          res.json.error?.field === field.path
            ? bodyForMode(field.op, base, res.json.error?.message ?? '')
            : null;
        if (mode) {
          base = mode;
          res = await send(idA);
          summary.isolationRequests++;
        }
        const ghostId = ghostOf(idA);
        const ghost = await send(ghostId);
        summary.isolationRequests += 2;
        const shown = (answer: Answer, id: string) =>
          `${answer.status} ${answer.json.error?.code} ${answer.json.error?.field} ${(answer.json.error?.message ?? '').split(id).join('{id}')}`;
        table.push(`${key}: ${res.status} ${res.json.error?.code ?? ''} ${res.json.error?.field ?? ''}`);
        if (res.status < 300) {
          problems.push(`${key}: B's request naming A's ${idA} succeeded: ${res.text.slice(0, 200)}`);
        } else if (shown(res, idA) !== shown(ghost, ghostId)) {
          problems.push(
            `${key}: A's id answers "${shown(res, idA)}", an unknown one "${shown(ghost, ghostId)}"`,
          );
        }
        const leaked = aIdsIn(res.text).filter((id) => id !== idA);
        if (leaked.length > 0) {
          problems.push(`${key}: the answer names A's ${leaked.join(', ')}`);
        }
        for (const problem of envelopeProblems(res)) {
          problems.push(`${key}: ${problem}`);
        }
      }
      process.stdout.write(`security: A's ids in B's bodies\n  ${table.join('\n  ')}\n`);
      expect(problems).toEqual([]);
      expect(changedTables(before, await rowsA.current())).toEqual([]);
      // The references were looked at: most refusals are the lookup's own (invalid_reference or not_found).
      const looked = table.filter((line) => / (404 not_found|422 invalid_reference) /.test(line));
      expect(fields.length).toBeGreaterThanOrEqual(8);
      expect(looked.length).toBeGreaterThanOrEqual(Math.ceil(fields.length / 2));
    }, 60_000);

    it("lets B reuse A's natural keys: no duplicate answer tells B what A has", async () => {
      const before = await rowsA.settled();
      const problems: string[] = [];
      let tried = 0;
      const urlPaths = new Set(urlFields().map((field) => `${field.op.operationId} ${field.path}`));
      // One NAS address is one FreeRADIUS client, platform-wide (docs/decisions.md): its 409 is documented.
      const documented = new Set(['duplicate_nas', 'duplicate_tenant']);
      for (const op of operations().filter((o) => o.method === 'post' && o.example !== undefined)) {
        const base = validBodyFor(op, worldB);
        if (!base) {
          continue;
        }
        for (const [name, own] of Object.entries(base)) {
          if (typeof own !== 'string' || urlPaths.has(`${op.operationId} ${name}`) || RECORD_ID.test(own)) {
            continue;
          }
          const theirs = recordsA
            .map((record) => record[name])
            .find((v) => typeof v === 'string' && v !== own);
          if (typeof theirs !== 'string' || RECORD_ID.test(theirs)) {
            continue;
          }
          tried++;
          summary.isolationRoutes.add(endpoint(op));
          const path = pathFor(op, worldB);
          const fresh = { ...base, ...uniqueValues() };
          const body = Object.fromEntries(Object.keys(base).map((key) => [key, fresh[key]]));
          const res = await call(client, 'POST', path, asB, { ...body, [name]: theirs });
          summary.isolationRequests++;
          const issued = rowOf(res);
          if (typeof issued.token === 'string') {
            scanner.add(`token issued to B (${endpoint(op)})`, issued.token);
          }
          if (typeof issued.secret === 'string') {
            scanner.add(`webhook secret issued to B (${endpoint(op)})`, issued.secret, ['webhooks']);
          }
          const code = res.json.error?.code ?? '';
          if (res.status === 409 && code.startsWith('duplicate_') && !documented.has(code)) {
            const control = await call(client, 'POST', path, asB, body);
            summary.isolationRequests++;
            if (control.json.error?.code !== code) {
              problems.push(
                `${endpoint(op)} with A's ${name} ${JSON.stringify(theirs)}: ${res.status} ${code}`,
              );
            }
          }
          if (aIdsIn(res.text).length > 0) {
            problems.push(
              `${endpoint(op)} with A's ${name}: the answer names A's ${aIdsIn(res.text).join(', ')}`,
            );
          }
        }
      }
      expect(problems).toEqual([]);
      expect(tried).toBeGreaterThan(5);
      expect(changedTables(before, await rowsA.current())).toEqual([]);
    }, 60_000);

    it("delivers none of A's events to B's webhook, and B's own ones", async () => {
      const body = {
        ...(validBodyFor(
          operations().find((o) => o.operationId === 'createSubscriber') as Operation,
          worldB,
        ) ?? {}),
      };
      const created = must('subscriber of B', await call(client, 'POST', '/api/v1/subscribers', asB, body));
      const id = String(rowOf(created).id);
      await receiverB.waitFor(
        1,
        20_000,
        (req) => req.body?.type === 'subscriber.created' && req.rawBody.includes(id),
      );
      const leaks = receiverB.requests
        .map((req) => ({ type: req.body?.type, ids: aIdsIn(`${JSON.stringify(req.headers)}${req.rawBody}`) }))
        .filter((req) => req.ids.length > 0);
      const received = new Set([...receiverB.eventIds()]);
      expect([...eventIdsA].filter((eventId) => received.has(eventId))).toEqual([]);
      expect(leaks).toEqual([]);
      expect(receiverB.requests.length).toBeGreaterThan(0);
      summary.isolationRoutes.add('webhook deliveries');
    }, 60_000);

    it("refuses B's token acting for A through X-Tenant-ID (403 tenant_forbidden) and changes nothing", async () => {
      const before = await rowsA.settled();
      const subscriberBody = validBodyFor(
        operations().find((o) => o.operationId === 'createSubscriber') as Operation,
        worldA,
      );
      const attempts: Array<[string, string, unknown]> = [
        ['GET', '/api/v1/subscribers', undefined],
        ['GET', `/api/v1/subscribers/${worldA.ids.subscribers}`, undefined],
        ['GET', '/api/v1/events', undefined],
        ['GET', `/api/v1/services/${made.serviceId}/sessions`, undefined],
        ['POST', '/api/v1/subscribers', subscriberBody],
        [
          'PATCH',
          `/api/v1/nas/${made.nasId}`,
          { secret: scanner.add('NAS secret (B acting for A)', `nas-${hex(12)}`) },
        ],
        ['DELETE', `/api/v1/webhooks/${made.webhookId}`, undefined],
      ];
      const answers: string[] = [];
      for (const tenant of [worldA.ids.tenants, worldA.tenantSlug]) {
        for (const [method, path, body] of attempts) {
          const res = await call(client, method, path, { ...asB, 'X-Tenant-ID': tenant }, body);
          summary.isolationRequests++;
          summary.isolationRoutes.add(`${method} ${path.replace(/[a-z]+_[0-9A-Z]{26}/g, '{id}')}`);
          answers.push(`${method} ${path} as ${tenant}: ${res.status} ${res.json.error?.code}`);
          expect(envelopeProblems(res)).toEqual([]);
          expect(aIdsIn(res.text).filter((id) => !path.includes(id))).toEqual([]);
        }
      }
      expect(answers.filter((a) => !a.endsWith('403 tenant_forbidden'))).toEqual([]);
      // Issuing a token for A is refused the same way; an unknown tenant is indistinguishable.
      const forA = await call(client, 'POST', '/api/v1/tokens', asB, {
        tenant: worldA.tenantSlug,
        name: 'for A',
        scopes: ['subscribers:read'],
      });
      expect([forA.status, forA.json.error?.code, forA.json.error?.field]).toEqual([
        403,
        'tenant_forbidden',
        'tenant',
      ]);
      const unknown = await call(client, 'GET', '/api/v1/subscribers', {
        ...asB,
        'X-Tenant-ID': ghostOf(worldA.ids.tenants),
      });
      expect([unknown.status, unknown.json.error?.code]).toEqual([403, 'tenant_forbidden']);
      expect(changedTables(before, await rowsA.current())).toEqual([]);
      // B naming itself is fine, so the refusals are about A.
      const own = await call(client, 'GET', '/api/v1/subscribers', {
        ...asB,
        'X-Tenant-ID': worldB.ids.tenants,
      });
      expect(own.status).toBe(200);
      expect((await call(client, 'GET', '/api/v1/me', asB)).json.data).toMatchObject({
        token_id: tokenBId,
        tenant_id: worldB.ids.tenants,
      });
    }, 60_000);
  });

  describe('X-Request-ID', () => {
    /** One GET /api/v1/me written byte for byte, with `header` lines (raw bytes) after the usual ones. */
    const rawGet = (header: Buffer) =>
      rawExchange(
        host,
        port,
        Buffer.concat([
          Buffer.from(
            `GET /api/v1/me HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nAuthorization: ${asB.Authorization}\r\n`,
            'latin1',
          ),
          header,
          Buffer.from('\r\n', 'latin1'),
        ]),
      );
    const line = (value: string, encoding: BufferEncoding = 'latin1') =>
      Buffer.from(`X-Request-ID: ${value}\r\n`, encoding);

    const unsafe: Array<[string, string, Buffer]> = [
      ['a \\x01 inside', 'abc\u0001def', line('abc\u0001def')],
      ['a \\x7f inside', 'abc\u007fdef', line('abc\u007fdef')],
      ['a NUL inside', 'abc\u0000def', line('abc\u0000def')],
      ['an ESC sequence', 'abc\u001b[31mred', line('abc\u001b[31mred')],
      ['a lone CR inside', 'abc\rdef', line('abc\rdef')],
      ['a lone LF inside', 'abc\ndef', line('abc\ndef')],
      ['a folded continuation line (CRLF + space)', 'abc def', line('abc\r\n def')],
      ['a tab inside', 'abc\tdef', line('abc\tdef')],
      ['a space inside', 'abc def', line('abc def')],
      ['10 KB', 'r'.repeat(10_240), line('r'.repeat(10_240))],
      ['129 safe characters', 's'.repeat(129), line('s'.repeat(129))],
      ['UTF-8 text', 'req-\u2713-ok', line('req-\u2713-ok', 'utf8')],
      ['a latin-1 byte', 'req-\u00e9', line('req-\u00e9')],
      ['percent-encoded CRLF', 'abc%0d%0aX-Injected:%20yes', line('abc%0d%0aX-Injected:%20yes')],
      ['HTML', '<script>alert(1)</script>', line('<script>alert(1)</script>')],
      ['the header twice', 'first-id, second-id', Buffer.concat([line('first-id'), line('second-id')])],
    ];

    it.each(unsafe)(
      'replaces one with %s by a generated id, in the header and the envelope',
      async (_label, value, bytes) => {
        const res = await rawGet(bytes);
        summary.requestIdStatuses[res.status] = (summary.requestIdStatuses[res.status] ?? 0) + 1;
        expect(res.status).toBeGreaterThanOrEqual(200);
        expect(res.status).toBeLessThan(500);
        expect(envelopeProblems(res)).toEqual([]);
        const sent = res.headers['x-request-id'];
        expect(isGeneratedRequestId(sent)).toBe(true);
        expect(sent).not.toBe(value);
        expect((JSON.parse(res.text) as Envelope).meta?.request_id).toBe(sent);
        expect(res.text).not.toContain(value);
      },
    );

    it('never lets CR/LF in the value add a header to the answer', async () => {
      const res = await rawGet(line('abc\r\nX-Injected: yes'));
      expect(res.headers['x-injected']).toBeUndefined();
      expect(res.headers['x-request-id']).not.toContain('X-Injected');
      expect(envelopeProblems(res)).toEqual([]);
    });

    it.each([
      ['a usual id', 'sec.req-1:ok_2'],
      ['128 safe characters', `${'t'.repeat(124)}-end`],
    ])('echoes %s', async (_label, value) => {
      const res = await rawGet(line(value));
      expect(res.headers['x-request-id']).toBe(value);
      expect((JSON.parse(res.text) as Envelope).meta?.request_id).toBe(value);
      // Through Node's own client too, on a request that fails.
      const refused = await call(client, 'GET', '/api/v1/subscribers/sub_nope', {
        ...asB,
        'X-Request-ID': value,
      });
      expect([refused.status, refused.headers['x-request-id'], refused.json.meta?.request_id]).toEqual([
        404,
        value,
        value,
      ]);
    });
  });

  describe('callbacks to private addresses', () => {
    const PUBLIC = '93.184.216.34';
    const privateUrls: Array<[string, string]> = [
      ['the loopback without a port', 'http://127.0.0.1/hook'],
      ['the loopback over https', 'https://127.0.0.1:8443/hook'],
      ['the loopback in short form', 'http://127.1/hook'],
      ['the loopback as a decimal integer', 'http://2130706433/hook'],
      ['the loopback as a hex integer', 'http://0x7f000001/hook'],
      ['the loopback in octal', 'http://0177.0.0.1/hook'],
      ['the loopback in dotted hex', 'http://0x7f.0x0.0x0.0x1/hook'],
      ['the loopback as one octal integer', 'http://017700000001/hook'],
      ['another 127/8 address', 'http://127.254.1.9:9000/hook'],
      ['a 10/8 address with a port', 'http://10.20.30.40:8080/hook'],
      ['a 10/8 address in decimal', 'http://167772161/hook'],
      ['the cloud metadata address', 'http://169.254.169.254/latest/meta-data/iam/security-credentials/'],
      ['the metadata address in hex', 'http://0xa9fea9fe/latest/meta-data/'],
      ['the metadata address IPv4-mapped', 'http://[::ffff:a9fe:a9fe]/latest/meta-data/'],
      ['the IPv6 metadata address', 'http://[fd00:ec2::254]/latest/meta-data/'],
      ['a 192.168/16 address', 'http://192.168.0.1/hook'],
      ['a 172.16/12 address', 'http://172.31.255.254/hook'],
      ['the IPv6 loopback', 'http://[::1]/hook'],
      ['the IPv6 loopback spelled out', 'http://[0:0:0:0:0:0:0:1]:8080/hook'],
      ['the IPv6 unspecified address', 'http://[::]/hook'],
      ['the unspecified address as 0', 'http://0/hook'],
      ['localhost', 'http://localhost/hook'],
      ['LOCALHOST in capitals', 'http://LOCALHOST:3000/hook'],
      ['localhost with a trailing dot', 'http://localhost./hook'],
      ['a loopback with a trailing dot', 'http://127.0.0.1./hook'],
      ['a name resolving to 127.0.0.1', 'http://loopback.security.test/hook'],
      ['a name resolving to the metadata address', 'http://metadata.security.test/hook'],
      ['a name resolving to ::1', 'http://v6-loopback.security.test/hook'],
      ['a name resolving to 10.0.0.5', 'http://intranet.security.test/hook'],
      ['credentials before a loopback host', `http://${PUBLIC}@127.0.0.1/hook`],
      ['a loopback behind leading spaces', '   http://127.0.0.1/hook'],
    ];
    let gWorld: World;

    beforeAll(async () => {
      const g = guarded as TestApp;
      const admin = { Authorization: `Bearer ${g.adminToken}` };
      const tenant = must(
        'guarded tenant',
        await call(guardedClient, 'POST', '/api/v1/tenants', admin, {
          slug: uniqueValues().slug,
          name: 'callbacks',
        }),
      );
      gWorld = {
        ids: { tenants: String(rowOf(tenant).id) },
        tenantSlug: String(rowOf(tenant).slug),
        headers: { ...admin, 'X-Tenant-ID': String(rowOf(tenant).id) },
      };
      const hook = must(
        'public webhook',
        await call(guardedClient, 'POST', '/api/v1/webhooks', gWorld.headers, {
          url: `http://${PUBLIC}/hook`,
          events: ['*'],
        }),
      );
      gWorld.ids.webhooks = String(rowOf(hook).id);
      callbacksTenant = gWorld.ids.tenants;
      scanner.add('webhook secret (callbacks tenant)', String(rowOf(hook).secret), ['webhooks']);
    });

    afterEach(() => jest.restoreAllMocks());

    it('finds every request field that takes a URL in openapi.json', () => {
      const found = urlFields().map((field) => `${endpoint(field.op)} ${field.path}`);
      expect(found).toEqual(
        expect.arrayContaining(['POST /api/v1/webhooks url', 'PATCH /api/v1/webhooks/{id} url']),
      );
    });

    it('refuses every private spelling on every URL field with 422 validation_failed, storing nothing', async () => {
      fakeRegistrationDns({
        'loopback.security.test': ['127.0.0.1'],
        'metadata.security.test': ['169.254.169.254'],
        'v6-loopback.security.test': ['::1'],
        'intranet.security.test': ['10.0.0.5'],
        'public.security.test': [PUBLIC],
      });
      const problems: string[] = [];
      const accepted: string[] = [];
      // A URL the server only prints and never requests is no callback: the tenant's website (issue 29, on its
      // invoices), the walled garden's payment page (issue 33: handed to the NAS, often on the ISP's own network).
      // Every field the server may call stays on the list.
      const neverFetched = new Set([
        'PATCH /api/v1/tenant/settings contact.website',
        'PATCH /api/v1/network-settings payment_page_url',
      ]);
      const fields = urlFields().filter((field) => !neverFetched.has(`${endpoint(field.op)} ${field.path}`));
      expect(fields.length).toBe(urlFields().length - neverFetched.size);
      for (const field of fields) {
        const path = pathFor(field.op, gWorld);
        const base = validBodyFor(field.op, gWorld) ?? {};
        const send = (url: string) =>
          call(
            guardedClient,
            field.op.method.toUpperCase(),
            path,
            gWorld.headers,
            withValue(base, field.path, url),
          );
        for (const [label, url] of privateUrls) {
          const res = await send(url);
          const got = [res.status, res.json.error?.code, res.json.error?.field];
          if (JSON.stringify(got) !== JSON.stringify([422, 'validation_failed', field.path])) {
            problems.push(
              `${endpoint(field.op)} ${field.path} = ${label} (${url}): ${res.status} ${res.text.slice(0, 160)}`,
            );
          }
        }
        // The same field takes a public address, by IP and by a name that resolves to one.
        for (const url of [`http://${PUBLIC}/hook`, 'http://public.security.test/hook']) {
          const res = await send(url);
          if (res.status >= 300) {
            problems.push(
              `${endpoint(field.op)} ${field.path} = ${url}: refused ${res.status} ${res.text.slice(0, 160)}`,
            );
          } else {
            accepted.push(url);
          }
        }
      }
      expect(problems).toEqual([]);
      // Nothing refused was stored: the tenant's webhooks point only at the public addresses.
      const list = must(
        'webhooks',
        await call(guardedClient, 'GET', '/api/v1/webhooks?limit=100', gWorld.headers),
      );
      const urls = rowsOf(list).map((hook) => String(hook.url));
      expect(urls.filter((url) => !url.includes(PUBLIC) && !url.includes('public.security.test'))).toEqual(
        [],
      );
      expect(accepted.length).toBe(fields.length * 2);
    }, 60_000);
  });

  describe('at rest and in the logs', () => {
    it('stores each secret only where it is used: tokens as hashes, nothing refused or replaced', async () => {
      const ds = (main as TestApp).dataSource;
      const tables = await ds.query<Array<{ name: string }>>(
        `SELECT table_name AS name FROM information_schema.tables
          WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name`,
      );
      // The documented examples (the fixtures' and the update examples' secrets) are constants every suite on this
      // database may store legitimately: only the secrets this suite made up are held to where they belong.
      const own = scanner.secrets.filter((secret) => !/example|fixture/.test(secret.name));
      const values = own.map((secret) => secret.value);
      const found = new Map<string, string[]>(values.map((value) => [value, []]));
      for (const { name } of tables) {
        const rows = await ds.query<Array<{ s: string }>>(
          `SELECT s FROM unnest($1::text[]) s
            WHERE EXISTS (SELECT 1 FROM "${name}" t WHERE strpos(to_jsonb(t)::text, s) > 0)`,
          [values],
        );
        for (const row of rows) {
          found.get(row.s)?.push(name);
        }
      }
      const where = (list: string[]) => [...new Set(list)].sort();
      expect(
        own.map((secret) => `${secret.name}: ${where(found.get(secret.value) ?? []).join(', ')}`),
      ).toEqual(own.map((secret) => `${secret.name}: ${where(secret.storedIn).join(', ')}`));
    }, 60_000);

    it('hold none of the secrets nor an unsafe request id, at the finest level the app has', async () => {
      client.close();
      guardedClient.close();
      await main?.close();
      await guarded?.close();
      main = null;
      guarded = null;
      await mainLog.close();
      await guardedLog.close();
      const leaks: string[] = [];
      const lines = [...mainLog.lines(), ...guardedLog.lines()];
      summary.logLines = lines.length;
      const unsafeIds = ['r'.repeat(10_240), 's'.repeat(129), 'abc\u0001def', '<script>alert(1)</script>'];
      for (const text of lines) {
        for (const secret of scanner.find(text)) {
          leaks.push(`${secret.name}: ${text.slice(0, 300)}`);
        }
        for (const id of unsafeIds) {
          if (text.includes(JSON.stringify(id).slice(1, -1))) {
            leaks.push(`unsafe request id ${JSON.stringify(id.slice(0, 20))}: ${text.slice(0, 200)}`);
          }
        }
      }
      expect(leaks).toEqual([]);
      // The logs are real: every request of the token was logged, and the finest levels were on.
      expect(lines.some((text) => text.includes(`"token_id":"${made.tokenId}"`))).toBe(true);
      expect(lines.some((text) => /"level":(10|20)\b/.test(text))).toBe(true);
      expect(lines.length).toBeGreaterThan(500);
    }, 60_000);
  });
});
