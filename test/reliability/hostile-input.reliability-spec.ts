import fc from 'fast-check';
import { writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestApp, type TestApp } from '../support/test-app';
import { deleteAllWebhooks } from '../support/webhook-receiver';
import { codeOf, envelopeProblems } from './support/envelope-check';
import { captureLogs, recordSecrets } from './support/log-capture';
import { buildWorld, pathFor, validBodyFor, type World } from './support/fixtures';
import { hostileRequests, type HostileRequest } from './support/hostile-bodies';
import { hostilePathId, hostileQueryString } from './support/hostile-queries';
import {
  deleteOperations,
  OPENAPI_PATH,
  readOperations,
  writeOperations,
  type Operation,
} from './support/openapi-operations';
import { RawClient, rawExchange, type RawRequest, type RawResponse } from './support/raw-client';
import { changedTables, TableChecksums } from './support/table-checksum';
import { queryCases, schemaCases, typedQueryValue } from './support/schema-cases';
import { openApiContract } from '../support/contract/openapi-validator';

/**
 * Issue 18 item 1 and issue 27 item 5: hostile input on every endpoint of openapi.json. Every POST/PATCH gets, for
 * every property its request schema declares (each alternative of a union, nested and array-item properties), null,
 * its removal, every wrong JSON type and the extremes of its type (schema-cases.ts), then RELIABILITY_RUNS generated
 * bodies (mutations of its example and transport variants); every GET gets the same per documented query parameter,
 * an undeclared parameter, generated query strings and path ids; the server gets oversized and malformed headers.
 * Each answer must be below 500, in the envelope, with a catalog code at the catalog's status; a 2xx for a body or
 * query value openapi.json forbids (Ajv on the operation's schema) is a failure; and no refused (non-2xx) request may
 * change a row of any table. Requests go to real records of a fresh tenant, with the platform admin token acting for
 * it, so validation and lookups are reached.
 *
 * Knobs: RELIABILITY_RUNS (generated bodies per POST/PATCH, default 600), RELIABILITY_QUERY_RUNS (query strings per GET,
 * default RUNS/4), RELIABILITY_ID_RUNS (hostile ids per path parameter, default min(RUNS, 100)), RELIABILITY_SEED.
 * The seed is printed; the same seed sends the same requests. A summary (per endpoint: inputs, statuses, codes,
 * defects with reproductions) is written to the system temp folder and its path printed.
 */

const RUNS = Number(process.env.RELIABILITY_RUNS ?? 600);
const QUERY_RUNS = Number(process.env.RELIABILITY_QUERY_RUNS ?? Math.ceil(RUNS / 4));
const ID_RUNS = Number(process.env.RELIABILITY_ID_RUNS ?? Math.min(RUNS, 100));
const SEED = Number(process.env.RELIABILITY_SEED ?? 18_001);
/** Requests between two table checksums, and how many are in flight at once. */
const BATCH = 100;
const CONCURRENCY = 4;
const MAX_DEFECTS_KEPT = 30;

interface Defect {
  problem: string;
  label: string;
  request: { method: string; path: string; headers: Record<string, string>; body: string };
  response: { status: number; body: string };
}

interface EndpointReport {
  endpoint: string;
  seed: number;
  inputs: number;
  replays: number;
  statuses: Record<string, number>;
  codes: Record<string, number>;
  failures: number;
  defects: Defect[];
  ms: number;
}

interface Prepared extends RawRequest {
  label: string;
  /** What the document allows: the problems Ajv finds in what was sent (empty: allowed), checked on a 2xx. */
  forbidden?: () => string[];
}

/** Readable text of what was sent: short bodies whole (JSON-escaped), long ones cut, binary ones in hex. */
function preview(body: Buffer | null): string {
  if (body === null) {
    return '(no body)';
  }
  const text = body.toString('utf8');
  const binary =
    !Buffer.from(text, 'utf8').equals(body) || [...text].some((c) => c < '\t' || (c > '\r' && c < ' '));
  const shown = binary ? `hex:${body.subarray(0, 200).toString('hex')}` : JSON.stringify(text.slice(0, 300));
  return body.length > 300 ? `${shown} …(${body.length} bytes)` : shown;
}

/** An empty report for `endpoint`, kept in the run's list (written to the summary file at the end). */
function newReport(endpoint: string, seed: number): EndpointReport {
  const report: EndpointReport = {
    endpoint,
    seed,
    inputs: 0,
    replays: 0,
    statuses: {},
    codes: {},
    failures: 0,
    defects: [],
    ms: 0,
  };
  reports.push(report);
  return report;
}

/** A stable per-endpoint seed, so adding an endpoint does not change what the others are sent. */
function seedFor(key: string): number {
  let hash = SEED;
  for (const char of key) {
    hash = (Math.imul(hash, 31) + char.charCodeAt(0)) | 0;
  }
  return hash;
}

const reports: EndpointReport[] = [];

describe('Hostile input on every endpoint of openapi.json (issue 18 item 1)', () => {
  let t: TestApp;
  let client: RawClient;
  let host: string;
  let port: number;
  let sums: TableChecksums;
  let readWorld: World;
  const worldTenants: string[] = [];

  beforeAll(async () => {
    process.stdout.write(
      `hostile input: seed ${SEED}, ${RUNS} bodies per POST/PATCH, ${QUERY_RUNS} query strings per GET, ` +
        `${ID_RUNS} ids per path parameter (RELIABILITY_SEED / _RUNS / _QUERY_RUNS / _ID_RUNS)\n`,
    );
    // Workers and scheduler off: no table changes by itself, so any change is a request's. Private webhook URLs
    // allowed: the example's example.com may not resolve here, and nothing is delivered anyway.
    t = await startTestApp(
      {
        WEBHOOK_WORKER_ENABLED: 'false',
        PROVISIONING_WORKER_ENABLED: 'false',
        BILLING_SCHEDULER_ENABLED: 'false',
        AUTOMATION_ENABLED: 'false',
        NOTIFICATION_WORKER_ENABLED: 'false',
        WEBHOOK_ALLOW_PRIVATE: 'true',
        LOG_LEVEL: 'info',
      },
      { logDestination: captureLogs('hostile-input') },
    );
    recordSecrets(t.adminToken);
    await new Promise<void>((resolve) => t.http.listen(0, '127.0.0.1', resolve));
    ({ address: host, port } = t.http.address() as AddressInfo);
    client = new RawClient(host, port);
    sums = new TableChecksums(t.dataSource);
    await sums.init();
    readWorld = await buildWorld(client, t.adminToken);
    worldTenants.push(readWorld.ids.tenants);
    await sums.settled();
  }, 120_000);

  afterAll(async () => {
    // The worlds' webhooks (and those the hostile bodies created) point at addresses nobody answers; a later suite's
    // worker on the same database would spend its time on their deliveries.
    for (const tenant of worldTenants) {
      await deleteAllWebhooks(t.http, t.adminToken, tenant);
    }
    client?.close();
    await t?.close();
    const file = join(tmpdir(), 'isp-hostile-input.json');
    writeFileSync(
      file,
      JSON.stringify(
        { seed: SEED, runs: RUNS, queryRuns: QUERY_RUNS, idRuns: ID_RUNS, openapi: OPENAPI_PATH, reports },
        null,
        2,
      ),
    );
    const lines = reports.map(
      (r) =>
        `${r.endpoint.padEnd(62)} ${String(r.inputs).padStart(5)} in ${String(r.ms).padStart(6)} ms  ` +
        `${Object.entries(r.statuses)
          .map(([status, n]) => `${status}:${n}`)
          .join(' ')}${r.failures ? `  FAILED ${r.failures}` : ''}`,
    );
    const total = reports.reduce((sum, r) => sum + r.inputs, 0);
    process.stdout.write(
      `\nhostile input, seed ${SEED}: ${total} requests\n${lines.join('\n')}\nsummary: ${file}\n`,
    );
  });

  /** Sends `inputs` (CONCURRENCY at once); every answer is judged, but only first sends are counted as inputs. */
  async function sendAll(
    report: EndpointReport,
    inputs: Prepared[],
    first: boolean,
  ): Promise<Array<{ input: Prepared; res: RawResponse }>> {
    const results: Array<{ input: Prepared; res: RawResponse }> = new Array(inputs.length);
    let next = 0;
    const worker = async () => {
      while (next < inputs.length) {
        const index = next++;
        const input = inputs[index];
        let res: RawResponse;
        try {
          res = await client.send(input);
        } catch (error) {
          res = { status: 0, headers: {}, text: `client error: ${(error as Error).message}` };
        }
        results[index] = { input, res };
        judge(report, input, res, first);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    return results;
  }

  function judge(report: EndpointReport, input: Prepared, res: RawResponse, first: boolean): void {
    if (first) {
      report.inputs++;
      report.statuses[res.status] = (report.statuses[res.status] ?? 0) + 1;
      const code = codeOf(res);
      report.codes[code] = (report.codes[code] ?? 0) + 1;
    } else {
      report.replays++;
    }
    for (const problem of envelopeProblems(res)) {
      record(report, problem, input, res);
    }
    if (res.status >= 200 && res.status < 300 && input.forbidden) {
      const problems = input.forbidden();
      if (problems.length > 0) {
        record(
          report,
          `accepted (${res.status}) what openapi.json forbids: ${problems.join('; ')}`,
          input,
          res,
        );
      }
    }
  }

  function record(report: EndpointReport, problem: string, input: Prepared, res: RawResponse): void {
    report.failures++;
    // One reproduction per problem and kind of input (the label's first word; a raw request's whole label).
    const kindOf = (label: string, method: string) => (method === 'RAW' ? label : label.split(' ')[0]);
    const kind = kindOf(input.label, input.method);
    const known = report.defects.some(
      (d) => d.problem === problem && kindOf(d.label, d.request.method) === kind,
    );
    if (!known && report.defects.length < MAX_DEFECTS_KEPT) {
      report.defects.push({
        problem,
        label: input.label,
        request: {
          method: input.method,
          path: input.path,
          headers: input.headers,
          body: preview(input.body),
        },
        response: { status: res.status, body: res.text.slice(0, 300) },
      });
    }
  }

  /**
   * Sends a batch between two checksums of every table. A batch in which some request succeeded cannot tell whose the
   * change was: its refused requests are sent again, alone (after the successes' effects settle), until a batch of
   * only refused requests is measured. A change there is bisected to the request that made it.
   */
  async function verifiedBatch(report: EndpointReport, inputs: Prepared[]): Promise<void> {
    let pending = inputs;
    for (let round = 0; pending.length > 0; round++) {
      const before = await sums.current();
      const results = await sendAll(report, pending, round === 0);
      const refused = results.filter(({ res }) => res.status < 200 || res.status >= 300);
      if (refused.length === results.length) {
        const changed = changedTables(before, await sums.current());
        if (changed.length > 0) {
          await blame(
            report,
            refused.map(({ input }) => input),
            changed,
          );
        }
        return;
      }
      await sums.settled();
      pending = refused.map(({ input }) => input);
      if (round >= 4) {
        report.failures++;
        report.defects.push({
          problem: 'refused requests never measured alone: each round some of them succeeded',
          label: pending[0]?.label ?? '',
          request: { method: '', path: '', headers: {}, body: '' },
          response: { status: 0, body: '' },
        });
        return;
      }
    }
  }

  /** One refused request at a time between checksums: the ones that change a table are defects. */
  async function blame(report: EndpointReport, inputs: Prepared[], tables: string[]): Promise<void> {
    let found = false;
    for (const input of inputs) {
      const before = await sums.settled();
      const res = await client.send(input);
      const changed = changedTables(before, await sums.settled());
      if (changed.length > 0 && (res.status < 200 || res.status >= 300)) {
        found = true;
        record(report, `refused (${res.status}) yet changed rows of ${changed.join(', ')}`, input, res);
      }
    }
    if (!found) {
      record(
        report,
        `a batch of refused requests changed ${tables.join(', ')}; no single one does when replayed`,
        inputs[0],
        {
          status: 0,
          headers: {},
          text: '',
        },
      );
    }
  }

  async function attack(endpoint: string, seed: number, inputs: Prepared[]): Promise<EndpointReport> {
    const started = Date.now();
    const report = newReport(endpoint, seed);
    for (let i = 0; i < inputs.length; i += BATCH) {
      await verifiedBatch(report, inputs.slice(i, i + BATCH));
    }
    report.ms = Date.now() - started;
    return report;
  }

  /** What a failing endpoint shows: every distinct problem with one reproduction. */
  const verdict = (report: EndpointReport) =>
    report.defects.map(
      (d) =>
        `${d.problem} ← ${d.label}: ${d.request.method} ${d.request.path.slice(0, 200)} ${d.request.body.slice(0, 200)} → ${d.response.status} ${d.response.body.slice(0, 200)}`,
    );

  const writes = writeOperations();
  const reads = readOperations();
  const deletes = deleteOperations();
  const contract = openApiContract();

  /** Ajv's complaints about the JSON text of a body for `op` (none when the text is no JSON, as for 1e309 keys). */
  const bodyForbidden = (op: Operation, json: string) => () => {
    let body: unknown;
    try {
      body = JSON.parse(json);
    } catch {
      return [];
    }
    return contract.requestBodyProblems(op.method, op.path, body) ?? [];
  };

  it('finds every POST/PATCH, GET and DELETE of the document', () => {
    expect(writes.length).toBeGreaterThan(0);
    expect(reads.length).toBeGreaterThan(0);
    expect(deletes.length).toBeGreaterThan(0);
  });

  describe.each(writes.map((op) => [`${op.method.toUpperCase()} ${op.path}`, op] as const))(
    '%s',
    (endpoint, op: Operation) => {
      it(`answers every declared property's hostile values and ${RUNS} generated bodies in the envelope, below 500, accepting only documented bodies, changing nothing when refused`, async () => {
        // A world of its own: an earlier endpoint's successes (a cancelled subscriber, a voided invoice) cannot
        // turn this one's requests into 404s and 409s before validation.
        const world = await buildWorld(client, t.adminToken);
        worldTenants.push(world.ids.tenants);
        // The world's bill run is carried out in the background: measured batches start once it is done.
        await sums.settled();
        const seed = seedFor(op.operationId);
        const samples: HostileRequest[] = fc.sample(
          hostileRequests(validBodyFor(op, world) ?? {}, op.bodySchema),
          {
            seed,
            numRuns: RUNS,
          },
        );
        const path = pathFor(op, world);
        // Every declared property's null, removal, wrong types and extremes first, then the generated bodies.
        const cases = schemaCases(validBodyFor(op, world) ?? {}, op.bodySchema);
        const inputs = [...cases, ...samples].map((sample): Prepared => ({
          label: sample.label,
          method: op.method.toUpperCase(),
          path,
          headers: { ...world.headers, ...sample.headers },
          body: sample.body,
          chunked: sample.chunked,
          forbidden: sample.json === undefined || !op.bodySchema ? undefined : bodyForbidden(op, sample.json),
        }));
        const report = await attack(endpoint, seed, inputs);
        expect(verdict(report)).toEqual([]);
      }, 600_000);
    },
  );

  describe.each(reads.map((op) => [`${op.method.toUpperCase()} ${op.path}`, op] as const))(
    '%s',
    (endpoint, op: Operation) => {
      it('answers hostile query strings and path ids in the envelope, below 500, accepting only documented values, changing nothing', async () => {
        const seed = seedFor(op.operationId);
        const names = op.queryParams.map((parameter) => parameter.name);
        const queries = fc.sample(hostileQueryString(names), {
          seed,
          numRuns: op.isList ? QUERY_RUNS : Math.ceil(QUERY_RUNS / 5),
        });
        // Every documented parameter's hostile values and an undeclared parameter first, then generated strings.
        const inputs: Prepared[] = queryCases(op.queryParams).map((entry) => ({
          label: entry.label,
          method: 'GET',
          path: `${pathFor(op, readWorld)}?${entry.query}`,
          headers: readWorld.headers,
          body: null,
          forbidden: () => {
            if (entry.undeclared) {
              return [`${entry.undeclared} is not a parameter of ${op.operationId}`];
            }
            if (!entry.parameter) {
              return [];
            }
            const { name, value, schema } = entry.parameter;
            return contract
              .schemaProblems(
                `query ${op.operationId} ${name}`,
                schema as Record<string, unknown>,
                typedQueryValue(value, schema),
              )
              .map((problem) => `${name}${problem}`);
          },
        }));
        inputs.push(
          ...queries.map((query) => ({
            label: `query ${query.slice(0, 60)}`,
            method: 'GET',
            path: `${pathFor(op, readWorld)}?${query}`,
            headers: readWorld.headers,
            body: null,
          })),
        );
        for (const name of op.pathParams) {
          for (const id of fc.sample(hostilePathId, { seed: seed + 1, numRuns: ID_RUNS })) {
            inputs.push({
              label: `path-id ${name}=${id.slice(0, 60)}`,
              method: 'GET',
              path: pathFor(op, readWorld, { [name]: id }),
              headers: readWorld.headers,
              body: null,
            });
          }
        }
        const report = await attack(endpoint, seed, inputs);
        expect(verdict(report)).toEqual([]);
      }, 600_000);
    },
  );

  describe.each(deletes.map((op) => [`${op.method.toUpperCase()} ${op.path}`, op] as const))(
    '%s',
    (endpoint, op: Operation) => {
      it('answers hostile path ids in the envelope, below 500, never removing anything', async () => {
        const seed = seedFor(op.operationId);
        const inputs: Prepared[] = [];
        for (const name of op.pathParams) {
          for (const id of fc.sample(hostilePathId, { seed: seed + 1, numRuns: ID_RUNS })) {
            inputs.push({
              label: `path-id ${name}=${id.slice(0, 60)}`,
              method: 'DELETE',
              path: pathFor(op, readWorld, { [name]: id }),
              headers: readWorld.headers,
              body: null,
              // No hostile id names a resource of the world: a 2xx removed something that is not there.
              forbidden: () => [`${name}=${id.slice(0, 60)} names nothing, yet the DELETE succeeded`],
            });
          }
        }
        const report = await attack(endpoint, seed, inputs);
        expect(verdict(report)).toEqual([]);
      }, 600_000);
    },
  );

  it('answers oversized and malformed requests (Node’s own 400 and 431 included) in the envelope', async () => {
    const auth = `Authorization: Bearer ${t.adminToken}\r\nX-Tenant-ID: ${readWorld.ids.tenants}\r\n`;
    const get = (extra: string, path = '/api/v1/subscribers') =>
      Buffer.from(
        `GET ${path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n${auth}${extra}\r\n`,
        'latin1',
      );
    const cases: Array<[string, Buffer]> = [
      ['one 20 KB header', get(`X-Big: ${'a'.repeat(20_000)}\r\n`)],
      ['one 100 KB header', get(`X-Big: ${'a'.repeat(100_000)}\r\n`)],
      [
        '300 headers of 100 bytes',
        get(Array.from({ length: 300 }, (_, i) => `X-H${i}: ${'b'.repeat(90)}\r\n`).join('')),
      ],
      ['a 20 KB URL', get('', `/api/v1/subscribers?q=${'c'.repeat(20_000)}`)],
      [
        'a 12 KB Authorization header',
        Buffer.from(
          `GET /api/v1/me HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: Bearer ${'d'.repeat(12_000)}\r\n\r\n`,
        ),
      ],
      ['a 10 KB X-Request-ID', get(`X-Request-ID: ${'e'.repeat(10_000)}\r\n`)],
      ['X-Request-ID with control characters', get('X-Request-ID: a\u0007b\u001bc\r\n')],
      ['a header line without a colon', get('NoColonHere\r\n')],
      ['a header name with a space', get('Bad Name: x\r\n')],
      ['a NUL in a header value', get('X-A: a\u0000b\r\n')],
      ['a non-numeric Content-Length', get('Content-Length: abc\r\n')],
      ['two different Content-Lengths', get('Content-Length: 1\r\nContent-Length: 2\r\n')],
      ['Content-Length with Transfer-Encoding', get('Content-Length: 3\r\nTransfer-Encoding: chunked\r\n')],
      ['an unknown Transfer-Encoding', get('Transfer-Encoding: gzip\r\n')],
      ['a bad request line', Buffer.from('GET /api/v1/me HTTP/9.9 extra\r\nHost: x\r\n\r\n')],
      ['a lowercase method', Buffer.from('get /api/v1/me HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')],
      ['an unknown method', Buffer.from('BREW /api/v1/me HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')],
      ['no Host header', Buffer.from(`GET /api/v1/me HTTP/1.1\r\nConnection: close\r\n${auth}\r\n`)],
      ['HTTP/1.0 without Host', Buffer.from(`GET /api/v1/me HTTP/1.0\r\n${auth}\r\n`)],
      ['an absolute-form target', get('', 'http://evil.example/api/v1/me')],
      ['an asterisk target', get('', '*')],
      ['a target without a slash', get('', 'api/v1/me')],
    ];
    const report = newReport('(server) oversized and malformed requests', 0);
    const started = Date.now();
    const before = await sums.current();
    for (const [label, bytes] of cases) {
      const res = await rawExchange(host, port, bytes);
      const input: Prepared = {
        label,
        method: 'RAW',
        path: bytes.subarray(0, 120).toString('latin1').split('\r\n')[0],
        headers: {},
        body: bytes,
      };
      judge(report, input, res, true);
      const requestId = res.headers['x-request-id'];
      if (typeof requestId === 'string' && (requestId.length > 128 || [...requestId].some((c) => c < ' '))) {
        record(report, 'X-Request-ID echoed unsanitized', input, res);
      }
    }
    expect(changedTables(before, await sums.current())).toEqual([]);
    report.ms = Date.now() - started;
    expect(
      report.defects.map(
        (d) =>
          `${d.label}: ${d.problem} (got ${d.response.status} ${JSON.stringify(d.response.body.slice(0, 80))})`,
      ),
    ).toEqual([]);
  }, 120_000);
});
