import request, { type Response } from 'supertest';
import { expectError, expectList, expectSuccess, expectNotFound, successRecord } from '../support/envelope';
import { bearer } from '../support/factories';
import {
  addDays,
  createNas,
  daysOf,
  deleteNas,
  FAST_COA,
  FAST_WORKER,
  getNas,
  getUsage,
  insertRadacct,
  listNas,
  listSessions,
  type Nas,
  NAS_FIELDS,
  NAS_ID,
  nasBody,
  nasClientRows,
  type NetworkOrder,
  patchNas,
  PinnableClock,
  postNas,
  randomLoopback,
  randomNasIp,
  type Session,
  uniqueAcctSessionId,
  uniqueSecret,
  untilSecondAfter,
  updateRadacct,
  type Usage,
  wholeSecond,
} from '../support/network-factory';
import {
  createPlan,
  createService,
  getOrder,
  getService,
  postAction,
  PROVISIONING_SCOPES,
  type Service,
  type ServicePlan,
  uniquePppoeUsername,
  waitForOrder,
} from '../support/provisioning-factory';
import { createSubscriber, listen, listEvents } from '../support/subscriber-factory';
import { createTenantWithToken, startTestApp, type TenantWithToken, type TestApp } from '../support/test-app';
import { letTimePass } from '../support/wait-for';
import { startFakeNas, type FakeNas } from '../radius/support/fake-nas';

/** An ISO instant `ms` milliseconds after `at`. */
const after = (at: string | Date, ms: number) => new Date(new Date(at).getTime() + ms).toISOString();

/** Issue #17: the NAS registry, sessions and usage from radacct, and the Disconnect/CoA outcome of orders. */
describe('Network: NAS registry, sessions, usage and Disconnect/CoA', () => {
  let t: TestApp;
  const clock = new PinnableClock();

  beforeAll(async () => {
    t = await startTestApp({ ...FAST_WORKER, ...FAST_COA }, { clock });
    await listen(t);
  });

  afterAll(async () => {
    await t?.close();
  });

  /** A fresh tenant with every provisioning scope, an active subscriber and a plan. */
  async function newIsp(planOverrides: Record<string, unknown> = {}) {
    const tenant = await createTenantWithToken(t, PROVISIONING_SCOPES);
    const subscriberId = (await createSubscriber(t, tenant.token, { status: 'active' })).id;
    const plan = await createPlan(t, tenant.token, planOverrides);
    return { tenant, subscriberId, plan };
  }

  type Isp = Awaited<ReturnType<typeof newIsp>>;

  /** Waits for the order to end and requires it completed without error. */
  async function completed(token: string, orderId: string): Promise<NetworkOrder> {
    const order = (await waitForOrder(t, token, orderId, [
      'completed',
      'failed',
      'cancelled',
    ])) as NetworkOrder;
    expect(order).toMatchObject({ status: 'completed', last_error: null });
    return order;
  }

  /** A service of the ISP whose activation completed, and that activation order. */
  async function activeService(
    isp: Isp,
    overrides: Record<string, unknown> = {},
  ): Promise<{ service: Service; activation: NetworkOrder }> {
    const { service, order } = await createService(t, isp.tenant.token, isp.subscriberId, {
      plan_id: isp.plan.id,
      ...overrides,
    });
    const activation = await completed(isp.tenant.token, order.id);
    return { service: await getService(t, isp.tenant.token, service.id), activation };
  }

  /** Posts the action (202) and answers its completed order. */
  async function act(isp: Isp, serviceId: string, body: Record<string, unknown>): Promise<NetworkOrder> {
    const res = await postAction(t, isp.tenant.token, serviceId, body);
    expectSuccess(res, 202);
    return completed(isp.tenant.token, res.body.data.id);
  }

  // ---------------------------------------------------------------------------------------------------------------
  describe('NAS registry', () => {
    it('should register a NAS with the defaults (type other, coa_port 3799, description null) and mirror it into FreeRADIUS’s nas table', async () => {
      const { tenant } = await newIsp();
      const body = nasBody();
      const res = await postNas(t, tenant.token, body);
      const nas = successRecord<Nas>(res, NAS_FIELDS, 201);
      expect(nas).toEqual({
        id: expect.stringMatching(NAS_ID),
        name: body.name,
        ip: body.ip,
        type: 'other',
        coa_port: 3799,
        description: null,
        created_at: expect.any(String),
        updated_at: nas.created_at,
      });
      expect(new Date(nas.created_at).toISOString()).toBe(nas.created_at);
      expect(await nasClientRows(t, nas.ip)).toEqual([
        { nasname: body.ip, shortname: body.name, type: 'other', secret: body.secret, description: nas.id },
      ]);
      const events = await listEvents(t, tenant.token, { subject_id: nas.id });
      expect(events.map((event) => event.type)).toEqual(['nas.created']);
      expect(events[0].data.object).toEqual(nas);
    });

    it('should register a NAS with every field, trimming its name and ip', async () => {
      const { tenant } = await newIsp();
      const ip = randomNasIp();
      const secret = uniqueSecret('every');
      const res = await postNas(t, tenant.token, {
        name: '  bng-north-1  ',
        ip: ` ${ip} `,
        secret,
        type: 'mikrotik',
        coa_port: 1700,
        description: 'North POP, rack 2',
      });
      expectSuccess(res, 201);
      expect(res.body.data).toMatchObject({
        name: 'bng-north-1',
        ip,
        type: 'mikrotik',
        coa_port: 1700,
        description: 'North POP, rack 2',
      });
      expect(await nasClientRows(t, ip)).toEqual([
        { nasname: ip, shortname: 'bng-north-1', type: 'mikrotik', secret, description: res.body.data.id },
      ]);
      for (const type of ['cisco', 'juniper', 'huawei', 'other']) {
        expectSuccess(await postNas(t, tenant.token, nasBody({ type })), 201);
      }
      // Bounds: coa_port 1 and 65535, a secret of 8 and of 128 printable characters, a name of 100.
      for (const overrides of [
        { coa_port: 1 },
        { coa_port: 65535 },
        { secret: '!~abcdef' },
        { secret: 'x'.repeat(128) },
        { name: 'n'.repeat(100), description: 'd'.repeat(500) },
      ]) {
        expectSuccess(await postNas(t, tenant.token, nasBody(overrides)), 201);
      }
    });

    it('should list the tenant’s NAS newest first, page by next_cursor and filter by created_gte/created_lt', async () => {
      const { tenant } = await newIsp();
      const other = await createTenantWithToken(t, PROVISIONING_SCOPES);
      const created: Nas[] = [];
      for (let i = 0; i < 3; i++) {
        created.push(await createNas(t, tenant.token));
        await createNas(t, other.token);
        // 5 ms apart, so that their created_at differ and newest-first is the order they were made in.
        await letTimePass(5);
      }
      const newestFirst = [...created].reverse();

      const all = await listNas(t, tenant.token);
      expectList(all);
      expect(all.body.data).toEqual(newestFirst);
      expect(all.body.meta.pagination).toEqual({ limit: 20, has_more: false, next_cursor: null });

      const first = await listNas(t, tenant.token, { limit: '2' });
      expectList(first);
      expect(first.body.data).toEqual(newestFirst.slice(0, 2));
      expect(first.body.meta.pagination).toMatchObject({ limit: 2, has_more: true });
      expect(typeof first.body.meta.pagination.next_cursor).toBe('string');

      const second = await listNas(t, tenant.token, {
        limit: '2',
        starting_after: first.body.meta.pagination.next_cursor,
      });
      expectList(second);
      expect(second.body.data).toEqual(newestFirst.slice(2));
      expect(second.body.meta.pagination).toEqual({ limit: 2, has_more: false, next_cursor: null });

      const since = await listNas(t, tenant.token, { created_gte: created[1].created_at });
      expectList(since);
      expect(since.body.data).toEqual([created[2], created[1]]);
      const before = await listNas(t, tenant.token, { created_lt: created[1].created_at });
      expectList(before);
      expect(before.body.data).toEqual([created[0]]);

      expectError(
        await listNas(t, tenant.token, { starting_after: 'garbage' }),
        400,
        'invalid_cursor',
        'starting_after',
      );
    });

    it('should register a NAS on a loopback address 127.x.y.z (where the suites’ fake NAS listens)', async () => {
      const { tenant } = await newIsp();
      const ip = randomLoopback();
      const secret = uniqueSecret('loopback');
      const res = await postNas(t, tenant.token, nasBody({ ip, secret }));
      expectSuccess(res, 201);
      expect(res.body.data.ip).toBe(ip);
      expect(await nasClientRows(t, ip)).toEqual([
        { nasname: ip, shortname: res.body.data.name, type: 'other', secret, description: res.body.data.id },
      ]);
    });

    it('should get a NAS by id, as POST answered it', async () => {
      const { tenant } = await newIsp();
      const nas = await createNas(t, tenant.token, { type: 'juniper', description: 'core' });
      const res = await getNas(t, tenant.token, nas.id);
      expectSuccess(res);
      expect(res.body.data).toEqual(nas);
    });

    it('should change each field by PATCH: the nas row moves with the ip, the secret is rewritten, nas.updated names the field', async () => {
      const { tenant } = await newIsp();
      const firstSecret = uniqueSecret('first');
      let nas = await createNas(t, tenant.token, {
        secret: firstSecret,
        type: 'mikrotik',
        description: 'rack 1',
      });
      const oldIp = nas.ip;
      let secret = firstSecret;

      const steps: [Record<string, unknown>, string, Partial<Nas>][] = [
        [{ name: '  bng-renamed ' }, 'name', { name: 'bng-renamed' }],
        [{ ip: randomNasIp() }, 'ip', {}],
        [{ secret: uniqueSecret('second') }, 'secret', {}],
        [{ type: 'cisco' }, 'type', { type: 'cisco' }],
        [{ coa_port: 1700 }, 'coa_port', { coa_port: 1700 }],
        [{ description: 'rack 2' }, 'description', { description: 'rack 2' }],
        [{ description: null }, 'description', { description: null }],
      ];
      for (const [body, field, expected] of steps) {
        const previous = nas;
        const res = await patchNas(t, tenant.token, nas.id, body);
        expectSuccess(res);
        nas = res.body.data as Nas;
        expect(Object.keys(nas).sort()).toEqual(NAS_FIELDS);
        const changes: Partial<Nas> = { ...expected };
        if (field === 'ip') {
          changes.ip = body.ip as string;
        }
        expect(nas).toEqual({ ...previous, ...changes, updated_at: expect.any(String) });
        expect(nas.updated_at >= previous.updated_at).toBe(true);
        if (field === 'secret') {
          secret = body.secret as string;
        }
        expect((await getNas(t, tenant.token, nas.id)).body.data).toEqual(nas);
        const [event] = await listEvents(t, tenant.token, { subject_id: nas.id, type: 'nas.updated' });
        expect(event.data).toEqual({ object: nas, changed_fields: [field] });
        expect(await nasClientRows(t, nas.ip)).toEqual([
          { nasname: nas.ip, shortname: nas.name, type: nas.type, secret, description: nas.id },
        ]);
      }
      expect(nas.ip).not.toBe(oldIp);
      expect(await nasClientRows(t, oldIp)).toEqual([]);
      expect(secret).not.toBe(firstSecret);

      // Two fields at once are named together.
      const both = await patchNas(t, tenant.token, nas.id, { name: 'bng-both', coa_port: 3799 });
      expectSuccess(both);
      const [event] = await listEvents(t, tenant.token, { subject_id: nas.id, type: 'nas.updated' });
      expect([...(event.data.changed_fields as string[])].sort()).toEqual(['coa_port', 'name']);
    });

    it('should answer an unchanged PATCH (or an empty one) with the same record and no event', async () => {
      const { tenant } = await newIsp();
      const secret = uniqueSecret();
      const nas = await createNas(t, tenant.token, { secret, type: 'huawei', description: 'same' });
      for (const body of [
        {},
        { name: nas.name, ip: nas.ip, secret, type: 'huawei', coa_port: nas.coa_port, description: 'same' },
      ]) {
        const res = await patchNas(t, tenant.token, nas.id, body);
        expectSuccess(res);
        expect(res.body.data).toEqual(nas);
      }
      const events = await listEvents(t, tenant.token, { subject_id: nas.id });
      expect(events.map((event) => event.type)).toEqual(['nas.created']);
    });

    it('should delete a NAS: 200 with its NasDto, its nas row gone, nas.deleted, then 404', async () => {
      const { tenant } = await newIsp();
      const nas = await createNas(t, tenant.token);
      const res = await deleteNas(t, tenant.token, nas.id);
      expectSuccess(res);
      expect(res.body.data).toEqual(nas);
      expect(await nasClientRows(t, nas.ip)).toEqual([]);
      const events = await listEvents(t, tenant.token, { subject_id: nas.id });
      expect(events.map((event) => event.type)).toEqual(['nas.deleted', 'nas.created']);
      expect(events[0].data.object).toEqual(nas);

      expectNotFound(await getNas(t, tenant.token, nas.id));
      expectNotFound(await patchNas(t, tenant.token, nas.id, { name: 'again' }));
      expectNotFound(await deleteNas(t, tenant.token, nas.id));
      const list = await listNas(t, tenant.token);
      expectList(list);
      expect(list.body.data).toEqual([]);
      // Its address is free again.
      expectSuccess(await postNas(t, tenant.token, nasBody({ ip: nas.ip })), 201);
    });

    it('should refuse an ip any tenant registered with 409 duplicate_nas (POST and PATCH), leaving FreeRADIUS’s row as it was', async () => {
      const { tenant: a } = await newIsp();
      const { tenant: b } = await newIsp();
      const secretA = uniqueSecret('a');
      const nasA = await createNas(t, a.token, { secret: secretA });
      const rowA = {
        nasname: nasA.ip,
        shortname: nasA.name,
        type: 'other',
        secret: secretA,
        description: nasA.id,
      };

      expectError(await postNas(t, b.token, nasBody({ ip: nasA.ip })), 409, 'duplicate_nas', 'ip');
      expectError(await postNas(t, b.token, nasBody({ ip: ` ${nasA.ip}` })), 409, 'duplicate_nas', 'ip');
      expectError(await postNas(t, a.token, nasBody({ ip: nasA.ip })), 409, 'duplicate_nas', 'ip');
      const nasB = await createNas(t, b.token);
      expectError(await patchNas(t, b.token, nasB.id, { ip: nasA.ip }), 409, 'duplicate_nas', 'ip');

      expect(await nasClientRows(t, nasA.ip)).toEqual([rowA]);
      expect((await getNas(t, b.token, nasB.id)).body.data).toEqual(nasB);
      expect((await listNas(t, b.token)).body.data).toEqual([nasB]);

      // Once A removes it, B may register it.
      expectSuccess(await deleteNas(t, a.token, nasA.id));
      const moved = await patchNas(t, b.token, nasB.id, { ip: nasA.ip });
      expectSuccess(moved);
      expect(moved.body.data.ip).toBe(nasA.ip);
    });

    it('should answer 404 not_found for another tenant’s NAS and for an unknown id, and change nothing', async () => {
      const { tenant: a } = await newIsp();
      const { tenant: b } = await newIsp();
      const secret = uniqueSecret();
      const nas = await createNas(t, a.token, { secret });
      for (const id of [nas.id, 'nas_01JD3Z6W3R4T5Y6U7I8O9P0QAB', 'nope']) {
        expectNotFound(await getNas(t, b.token, id));
        expectNotFound(await patchNas(t, b.token, id, { name: 'stolen' }));
        expectNotFound(await deleteNas(t, b.token, id));
      }
      expectNotFound(await getNas(t, a.token, 'nas_01JD3Z6W3R4T5Y6U7I8O9P0QAB'));
      expect((await getNas(t, a.token, nas.id)).body.data).toEqual(nas);
      expect(await nasClientRows(t, nas.ip)).toEqual([
        { nasname: nas.ip, shortname: nas.name, type: 'other', secret, description: nas.id },
      ]);
      expect((await listNas(t, b.token)).body.data).toEqual([]);
    });

    const INVALID: [string, Record<string, unknown>, number, string, string][] = [
      ['an ip out of range', { ip: '999.1.1.1' }, 422, 'validation_failed', 'ip'],
      ['a CIDR', { ip: '10.0.0.0/8' }, 422, 'validation_failed', 'ip'],
      ['an IPv6 address', { ip: '2001:db8::1' }, 422, 'validation_failed', 'ip'],
      ['a hostname', { ip: 'bng.example.net' }, 422, 'validation_failed', 'ip'],
      ['a multicast ip', { ip: '224.0.0.1' }, 422, 'validation_failed', 'ip'],
      ['a numeric ip', { ip: 167772161 }, 422, 'validation_failed', 'ip'],
      ['a secret of 7 characters', { secret: 'abcdefg' }, 422, 'validation_failed', 'secret'],
      ['a secret of 129 characters', { secret: 'x'.repeat(129) }, 422, 'validation_failed', 'secret'],
      ['a secret with a space', { secret: 'has a space1' }, 422, 'validation_failed', 'secret'],
      ['a secret with a non-ASCII character', { secret: 'sécret-long' }, 422, 'validation_failed', 'secret'],
      ['a number as secret', { secret: 123456789 }, 422, 'validation_failed', 'secret'],
      ['an array as secret', { secret: ['abcdefgh1'] }, 422, 'validation_failed', 'secret'],
      ['coa_port 0', { coa_port: 0 }, 422, 'validation_failed', 'coa_port'],
      ['coa_port 65536', { coa_port: 65536 }, 422, 'validation_failed', 'coa_port'],
      ['coa_port as a string', { coa_port: '3799' }, 422, 'validation_failed', 'coa_port'],
      ['a fractional coa_port', { coa_port: 1.5 }, 422, 'validation_failed', 'coa_port'],
      ['an unknown type', { type: 'ubiquiti' }, 422, 'validation_failed', 'type'],
      ['a blank name', { name: '   ' }, 422, 'validation_failed', 'name'],
      ['a name of 101 characters', { name: 'n'.repeat(101) }, 422, 'validation_failed', 'name'],
      [
        'a description of 501 characters',
        { description: 'd'.repeat(501) },
        422,
        'validation_failed',
        'description',
      ],
      ['an unknown field', { vendor: 'mikrotik' }, 400, 'unknown_field', 'vendor'],
      [
        'the secret under another name',
        { shared_secret: 'abcdefgh1' },
        400,
        'unknown_field',
        'shared_secret',
      ],
    ];

    it.each(INVALID)(
      'should refuse to register a NAS with %s',
      async (_label, overrides, status, code, field) => {
        const { tenant } = await newIsp();
        const body = nasBody(overrides);
        expectError(await postNas(t, tenant.token, body), status, code, field);
        const list = await listNas(t, tenant.token);
        expect(list.body.data).toEqual([]);
      },
    );

    it.each(['name', 'ip', 'secret'])('should answer 400 missing_field when %s is absent', async (field) => {
      const { tenant } = await newIsp();
      const body = nasBody();
      delete body[field];
      expectError(await postNas(t, tenant.token, body), 400, 'missing_field', field);
      expectError(
        await postNas(t, tenant.token, { ...nasBody(), [field]: null }),
        400,
        'missing_field',
        field,
      );
    });

    it.each(INVALID)(
      'should refuse a PATCH with %s and keep the NAS as it was',
      async (_label, overrides, status, code, field) => {
        const { tenant } = await newIsp();
        const secret = uniqueSecret();
        const nas = await createNas(t, tenant.token, { secret });
        expectError(await patchNas(t, tenant.token, nas.id, overrides), status, code, field);
        expect((await getNas(t, tenant.token, nas.id)).body.data).toEqual(nas);
        expect(await nasClientRows(t, nas.ip)).toEqual([
          { nasname: nas.ip, shortname: nas.name, type: 'other', secret, description: nas.id },
        ]);
      },
    );

    it('should let provisioning:read list and get but not write (403 insufficient_scope), and refuse a token without it', async () => {
      const { tenant } = await newIsp();
      const nas = await createNas(t, tenant.token);
      const reader = await createTenantWithToken(t, ['provisioning:read']);
      // The reader is another tenant: give it a NAS of its own through a writer of that tenant.
      const readerWriter = await request(t.http)
        .post('/api/v1/tokens')
        .set(bearer(t.adminToken))
        .send({ tenant: reader.slug, name: 'writer', scopes: ['provisioning:write'] })
        .expect(201);
      const own = await createNas(t, readerWriter.body.data.token);

      const list = await listNas(t, reader.token);
      expectList(list);
      expect(list.body.data).toEqual([own]);
      expectSuccess(await getNas(t, reader.token, own.id));
      expectError(await postNas(t, reader.token, nasBody()), 403, 'insufficient_scope');
      expectError(await patchNas(t, reader.token, own.id, { name: 'x' }), 403, 'insufficient_scope');
      expectError(await deleteNas(t, reader.token, own.id), 403, 'insufficient_scope');
      expect((await getNas(t, reader.token, own.id)).body.data).toEqual(own);

      const subscribersOnly = await createTenantWithToken(t, ['subscribers:read', 'subscribers:write']);
      expectError(await listNas(t, subscribersOnly.token), 403, 'insufficient_scope');
      expectError(await getNas(t, subscribersOnly.token, nas.id), 403, 'insufficient_scope');
      expectError(await postNas(t, subscribersOnly.token, nasBody()), 403, 'insufficient_scope');
      expectError(await request(t.http).get('/api/v1/nas'), 401, 'authentication_required');
    });

    it('should never put the secret in a response body or an event', async () => {
      const { tenant } = await newIsp();
      const other = await createTenantWithToken(t, PROVISIONING_SCOPES);
      const secrets = [uniqueSecret('one'), uniqueSecret('two'), uniqueSecret('three')];
      const bodies: { label: string; text: string }[] = [];
      const record = (res: Response) => {
        const req = (res as unknown as { req: { method: string; path: string } }).req;
        bodies.push({ label: `${req.method} ${req.path} → ${res.status}`, text: res.text });
        return res;
      };

      const created = record(
        await postNas(t, tenant.token, nasBody({ secret: secrets[0], type: 'mikrotik' })),
      );
      expectSuccess(created, 201);
      const nas = created.body.data as Nas;
      record(await getNas(t, tenant.token, nas.id));
      record(await listNas(t, tenant.token));
      record(await patchNas(t, tenant.token, nas.id, { secret: secrets[1] }));
      record(await patchNas(t, tenant.token, nas.id, { secret: secrets[1] }));
      record(await patchNas(t, tenant.token, nas.id, { secret: secrets[2], name: 'bng-x' }));
      record(await postNas(t, other.token, nasBody({ ip: nas.ip, secret: secrets[2] })));
      record(await postNas(t, tenant.token, nasBody({ secret: `${secrets[2]} x` })));
      record(await patchNas(t, tenant.token, nas.id, { secret: `${secrets[2]} x`, coa_port: 0 }));
      record(await deleteNas(t, tenant.token, nas.id));
      const events = record(
        await request(t.http)
          .get('/api/v1/events')
          .query({ type: 'nas.*', limit: '100' })
          .set(bearer(tenant.token)),
      );
      expectList(events);
      expect(events.body.data.map((event: { type: string }) => event.type)).toEqual([
        'nas.deleted',
        'nas.updated',
        'nas.updated',
        'nas.created',
      ]);
      expect(events.body.data[1].data.changed_fields).toEqual(expect.arrayContaining(['secret', 'name']));
      expect(events.body.data[2].data.changed_fields).toEqual(['secret']);
      for (const event of events.body.data as { id: string }[]) {
        record(await request(t.http).get(`/api/v1/events/${event.id}`).set(bearer(tenant.token)));
      }

      expect(bodies.length).toBeGreaterThan(14);
      for (const { label, text } of bodies) {
        for (const secret of secrets) {
          expect({ label, leaks: text.includes(secret) }).toEqual({ label, leaks: false });
        }
        // No record carries a `secret` key (an error may name the field: {"field":"secret"}).
        expect(text).not.toMatch(/"secret"\s*:/);
      }
    });
  });

  // ---------------------------------------------------------------------------------------------------------------
  describe('sessions', () => {
    const nasIp = randomNasIp();

    it('should map every radacct column of a session, online or stopped', async () => {
      const isp = await newIsp();
      const { service } = await createService(t, isp.tenant.token, isp.subscriberId, {
        plan_id: isp.plan.id,
      });
      const stoppedSid = uniqueAcctSessionId();
      const onlineSid = uniqueAcctSessionId();
      const start = after(service.created_at, 60_000);
      const stoppedId = await insertRadacct(t, {
        acctsessionid: stoppedSid,
        username: service.radius_username,
        nasipaddress: nasIp,
        acctstarttime: start,
        acctupdatetime: after(start, 300_000),
        acctstoptime: after(start, 360_000),
        acctsessiontime: 360,
        acctinputoctets: 5_000_000_000,
        acctoutputoctets: 73_400_320,
        framedipaddress: '100.64.0.17',
        acctterminatecause: 'User-Request',
      });
      const onlineId = await insertRadacct(t, {
        acctsessionid: onlineSid,
        username: service.radius_username,
        nasipaddress: nasIp,
        acctstarttime: after(start, 400_000),
      });

      const res = await listSessions(t, isp.tenant.token, service.id);
      expectList(res);
      expect(res.body.meta.pagination).toEqual({ limit: 20, has_more: false, next_cursor: null });
      expect(res.body.data).toEqual([
        {
          id: `ses_${onlineId}`,
          service_id: service.id,
          acct_session_id: onlineSid,
          username: service.radius_username,
          online: true,
          started_at: after(start, 400_000),
          updated_at: null,
          stopped_at: null,
          duration_s: null,
          nas_ip: nasIp,
          framed_ip: null,
          bytes_in: 0,
          bytes_out: 0,
          terminate_cause: null,
        },
        {
          id: `ses_${stoppedId}`,
          service_id: service.id,
          acct_session_id: stoppedSid,
          username: service.radius_username,
          online: false,
          started_at: start,
          updated_at: after(start, 300_000),
          stopped_at: after(start, 360_000),
          duration_s: 360,
          nas_ip: nasIp,
          framed_ip: '100.64.0.17',
          bytes_in: 5_000_000_000,
          bytes_out: 73_400_320,
          terminate_cause: 'User-Request',
        },
      ] satisfies Session[]);
    });

    it('should list exactly the service’s sessions, newest radacct row first: from the second of its creation to its termination, not another tenant’s', async () => {
      const isp = await newIsp();
      const pppoe = uniquePppoeUsername('reused');
      const { service: first } = await activeService(isp, { pppoe_username: pppoe });
      await act(isp, first.id, { action: 'terminate' });
      const terminated = await getService(t, isp.tenant.token, first.id);
      expect(terminated.terminated_at).not.toBeNull();
      const terminatedAt = terminated.terminated_at as string;
      // A window starts at the second of the creation (FreeRADIUS records seconds: docs/network.md), so the next
      // service of the username is made in a later second than the gap row below.
      await untilSecondAfter(after(terminatedAt, 1));
      const { service: second } = await createService(t, isp.tenant.token, isp.subscriberId, {
        plan_id: isp.plan.id,
        pppoe_username: pppoe,
      });
      expect(second.radius_username).toBe(first.radius_username);
      expect(after(terminatedAt, 1) < wholeSecond(second.created_at)).toBe(true);
      const otherIsp = await newIsp();
      const { service: foreign } = await createService(t, otherIsp.tenant.token, otherIsp.subscriberId, {
        plan_id: otherIsp.plan.id,
        pppoe_username: pppoe,
      });
      expect(foreign.radius_username).not.toBe(first.radius_username);

      const username = first.radius_username;
      const row = async (startedAt: string, user = username) =>
        `ses_${await insertRadacct(t, {
          acctsessionid: uniqueAcctSessionId(),
          username: user,
          nasipaddress: nasIp,
          acctstarttime: startedAt,
          acctupdatetime: startedAt,
        })}`;

      const beforeFirst = await row(after(wholeSecond(first.created_at), -1000));
      const firstAtCreation = await row(wholeSecond(first.created_at));
      const firstAtTermination = await row(terminatedAt);
      const inTheGap = await row(after(terminatedAt, 1));
      const secondAtCreation = await row(wholeSecond(second.created_at));
      const secondLater = await row(after(second.created_at, 60_000));
      const foreignRow = await row(after(second.created_at, 1000), foreign.radius_username);
      // A Start that reaches radacct late: a newer row of an earlier start.
      const secondLate = await row(after(second.created_at, 30_000));
      const someoneElse = await row(after(second.created_at, 1000), `${isp.tenant.slug}/someone.else`);

      const ids = async (tenant: TenantWithToken, serviceId: string) => {
        const res = await listSessions(t, tenant.token, serviceId);
        expectList(res);
        return (res.body.data as Session[]).map((session) => session.id);
      };
      expect(await ids(isp.tenant, second.id)).toEqual([secondLate, secondLater, secondAtCreation]);
      expect(await ids(isp.tenant, first.id)).toEqual([firstAtTermination, firstAtCreation]);
      expect(await ids(otherIsp.tenant, foreign.id)).toEqual([foreignRow]);
      const everyListed = [
        ...(await ids(isp.tenant, second.id)),
        ...(await ids(isp.tenant, first.id)),
        ...(await ids(otherIsp.tenant, foreign.id)),
      ];
      for (const excluded of [beforeFirst, inTheGap, someoneElse]) {
        expect(everyListed).not.toContain(excluded);
      }
    });

    it('should page the sessions two at a time by next_cursor', async () => {
      const isp = await newIsp();
      const { service } = await createService(t, isp.tenant.token, isp.subscriberId, {
        plan_id: isp.plan.id,
      });
      const ids: string[] = [];
      for (let i = 1; i <= 5; i++) {
        ids.push(
          `ses_${await insertRadacct(t, {
            acctsessionid: uniqueAcctSessionId(),
            username: service.radius_username,
            nasipaddress: nasIp,
            acctstarttime: after(service.created_at, i * 60_000),
          })}`,
        );
      }
      const newestFirst = [...ids].reverse();
      const seen: string[] = [];
      let cursor: string | null = null;
      const pages: { ids: string[]; has_more: boolean }[] = [];
      do {
        const res = await listSessions(t, isp.tenant.token, service.id, {
          limit: '2',
          ...(cursor ? { starting_after: cursor } : {}),
        });
        expectList(res);
        const page = (res.body.data as Session[]).map((session) => session.id);
        pages.push({ ids: page, has_more: res.body.meta.pagination.has_more });
        expect(res.body.meta.pagination.limit).toBe(2);
        cursor = res.body.meta.pagination.next_cursor;
        expect(cursor === null).toBe(!res.body.meta.pagination.has_more);
        seen.push(...page);
      } while (cursor && pages.length < 5);
      expect(pages).toEqual([
        { ids: newestFirst.slice(0, 2), has_more: true },
        { ids: newestFirst.slice(2, 4), has_more: true },
        { ids: newestFirst.slice(4), has_more: false },
      ]);
      expect(seen).toEqual(newestFirst);
    });

    it('should answer 400 invalid_cursor for a starting_after it did not issue', async () => {
      const isp = await newIsp();
      const { service } = await createService(t, isp.tenant.token, isp.subscriberId, {
        plan_id: isp.plan.id,
      });
      await createNas(t, isp.tenant.token);
      await createNas(t, isp.tenant.token);
      // A cursor of another list (the NAS registry's): its id is not a radacct row.
      const nasCursor = (await listNas(t, isp.tenant.token, { limit: '1' })).body.meta.pagination.next_cursor;
      expect(typeof nasCursor).toBe('string');
      for (const garbage of [
        'garbage',
        '!!!',
        Buffer.from('["2026-01-01T00:00:00.000Z","x1"]').toString('base64url'),
        Buffer.from('{"id":"12"}').toString('base64url'),
        nasCursor as string,
      ]) {
        expectError(
          await listSessions(t, isp.tenant.token, service.id, { starting_after: garbage }),
          400,
          'invalid_cursor',
          'starting_after',
        );
      }
    });

    it('should filter sessions on their start with created_gte and created_lt', async () => {
      const isp = await newIsp();
      const { service } = await createService(t, isp.tenant.token, isp.subscriberId, {
        plan_id: isp.plan.id,
      });
      const starts = [1, 2, 3].map((hours) => after(service.created_at, hours * 3_600_000));
      const ids: string[] = [];
      for (const start of starts) {
        ids.push(
          `ses_${await insertRadacct(t, {
            acctsessionid: uniqueAcctSessionId(),
            username: service.radius_username,
            nasipaddress: nasIp,
            acctstarttime: start,
          })}`,
        );
      }
      const query = async (q: Record<string, string>) => {
        const res = await listSessions(t, isp.tenant.token, service.id, q);
        expectList(res);
        return (res.body.data as Session[]).map((session) => session.id);
      };
      expect(await query({ created_gte: starts[1] })).toEqual([ids[2], ids[1]]);
      expect(await query({ created_lt: starts[1] })).toEqual([ids[0]]);
      expect(await query({ created_gte: starts[0], created_lt: starts[2] })).toEqual([ids[1], ids[0]]);
      expect(await query({ created_gte: after(starts[2], 1) })).toEqual([]);
      expectError(
        await listSessions(t, isp.tenant.token, service.id, { created_gte: 'yesterday' }),
        400,
        'invalid_query',
        'created_gte',
      );
    });

    it('should answer 404 not_found for another tenant’s service (sessions and usage)', async () => {
      const isp = await newIsp();
      const other = await newIsp();
      const { service } = await createService(t, isp.tenant.token, isp.subscriberId, {
        plan_id: isp.plan.id,
      });
      await insertRadacct(t, {
        acctsessionid: uniqueAcctSessionId(),
        username: service.radius_username,
        nasipaddress: nasIp,
        acctstarttime: after(service.created_at, 1000),
        acctinputoctets: 10,
      });
      expectNotFound(await listSessions(t, other.tenant.token, service.id));
      expectNotFound(await getUsage(t, other.tenant.token, service.id));
      expectNotFound(await listSessions(t, isp.tenant.token, 'svc_01JD3Z6W3R4T5Y6U7I8O9P0QAB'));
      expectNotFound(await getUsage(t, isp.tenant.token, 'svc_01JD3Z6W3R4T5Y6U7I8O9P0QAB'));
      const reader = await createTenantWithToken(t, ['subscribers:read']);
      expectError(await listSessions(t, reader.token, service.id), 403, 'insufficient_scope');
    });
  });

  // ---------------------------------------------------------------------------------------------------------------
  describe('usage', () => {
    const nasIp = randomNasIp();

    /**
     * A service with accounting over UTC days d1..d3 after today (d0): a session Started on d1 and updated late on
     * d1, then on d2 and stopped on d2; another Started on d3 and updated on d3 and d4 (without new octets); a row of
     * its username started before it was created; a row of another tenant's service of the same pppoe username.
     */
    async function serviceWithTraffic() {
      const isp = await newIsp();
      const pppoe = uniquePppoeUsername('usage');
      const { service } = await createService(t, isp.tenant.token, isp.subscriberId, {
        plan_id: isp.plan.id,
        pppoe_username: pppoe,
      });
      const d0 = service.created_at.slice(0, 10);
      const [d1, d2, d3, d4] = [1, 2, 3, 4].map((n) => addDays(d0, n));
      const at = (day: string, time: string) => `${day}T${time}Z`;

      // Counted for nobody: started the second before the service was created, updated on d1.
      const early = await insertRadacct(t, {
        acctsessionid: uniqueAcctSessionId(),
        username: service.radius_username,
        nasipaddress: nasIp,
        acctstarttime: after(wholeSecond(service.created_at), -1000),
      });
      await updateRadacct(t, early, {
        acctupdatetime: at(d1, '08:00:00.000'),
        acctinputoctets: 111,
        acctoutputoctets: 222,
      });

      const a = await insertRadacct(t, {
        acctsessionid: uniqueAcctSessionId(),
        username: service.radius_username,
        nasipaddress: nasIp,
        acctstarttime: at(d1, '10:00:00.000'),
        acctinputoctets: 1000,
        acctoutputoctets: 5000,
      });
      await updateRadacct(t, a, {
        acctupdatetime: at(d1, '23:59:59.999'),
        acctinputoctets: 1500,
        acctoutputoctets: 7000,
      });
      await updateRadacct(t, a, {
        acctupdatetime: at(d2, '00:00:00.000'),
        acctinputoctets: 4000,
        acctoutputoctets: 10_000,
      });
      await updateRadacct(t, a, {
        acctstoptime: at(d2, '01:00:00.000'),
        acctsessiontime: 54_000,
        acctinputoctets: 4100,
        acctoutputoctets: 10_100,
        acctterminatecause: 'Lost-Carrier',
      });

      const b = await insertRadacct(t, {
        acctsessionid: uniqueAcctSessionId(),
        username: service.radius_username,
        nasipaddress: nasIp,
        acctstarttime: at(d3, '12:00:00.000'),
        acctinputoctets: 0,
        acctoutputoctets: 0,
      });
      await updateRadacct(t, b, {
        acctupdatetime: at(d3, '13:00:00.000'),
        acctinputoctets: 700,
        acctoutputoctets: 900,
      });
      await updateRadacct(t, b, {
        acctupdatetime: at(d4, '13:00:00.000'),
        acctinputoctets: 700,
        acctoutputoctets: 900,
      });

      const other = await newIsp();
      const { service: foreign } = await createService(t, other.tenant.token, other.subscriberId, {
        plan_id: other.plan.id,
        pppoe_username: pppoe,
      });
      await insertRadacct(t, {
        acctsessionid: uniqueAcctSessionId(),
        username: foreign.radius_username,
        nasipaddress: nasIp,
        acctstarttime: at(d1, '11:00:00.000'),
        acctinputoctets: 9999,
        acctoutputoctets: 9999,
      });
      const figures: Record<string, { bytes_in: number; bytes_out: number }> = {
        [d1]: { bytes_in: 1500, bytes_out: 7000 },
        [d2]: { bytes_in: 2600, bytes_out: 3100 },
        [d3]: { bytes_in: 700, bytes_out: 900 },
      };
      return { isp, service, days: { d0, d1, d2, d3, d4 }, figures };
    }

    const expectedDays = (
      from: string,
      to: string,
      figures: Record<string, { bytes_in: number; bytes_out: number }>,
    ) => daysOf(from, to).map((date) => ({ date, ...(figures[date] ?? { bytes_in: 0, bytes_out: 0 }) }));

    it('should give exact per-UTC-day figures (a session over midnight on both days), zero days included, and their total', async () => {
      const { isp, service, days, figures } = await serviceWithTraffic();
      const res = await getUsage(t, isp.tenant.token, service.id, { from: days.d0, to: days.d4 });
      expectSuccess(res);
      expect(res.body.data).toEqual({
        service_id: service.id,
        from: days.d0,
        to: days.d4,
        days: [
          { date: days.d0, bytes_in: 0, bytes_out: 0 },
          { date: days.d1, bytes_in: 1500, bytes_out: 7000 },
          { date: days.d2, bytes_in: 2600, bytes_out: 3100 },
          { date: days.d3, bytes_in: 700, bytes_out: 900 },
          { date: days.d4, bytes_in: 0, bytes_out: 0 },
        ],
        total: { bytes_in: 4800, bytes_out: 11_000 },
      } satisfies Usage);

      const one = await getUsage(t, isp.tenant.token, service.id, { from: days.d2, to: days.d2 });
      expectSuccess(one);
      expect(one.body.data).toEqual({
        service_id: service.id,
        from: days.d2,
        to: days.d2,
        days: [{ date: days.d2, bytes_in: 2600, bytes_out: 3100 }],
        total: { bytes_in: 2600, bytes_out: 3100 },
      });

      const later = await getUsage(t, isp.tenant.token, service.id, {
        from: days.d3,
        to: addDays(days.d3, 40),
      });
      expectSuccess(later);
      expect(later.body.data.days).toEqual(expectedDays(days.d3, addDays(days.d3, 40), figures));
      expect(later.body.data.total).toEqual({ bytes_in: 700, bytes_out: 900 });
    });

    it('should default to to = today (the app’s clock, UTC) and from = to − 29 days', async () => {
      const { isp, service, days, figures } = await serviceWithTraffic();
      try {
        clock.pin(`${days.d3}T23:30:00.000Z`);
        const res = await getUsage(t, isp.tenant.token, service.id);
        expectSuccess(res);
        const from = addDays(days.d3, -29);
        expect(res.body.data).toEqual({
          service_id: service.id,
          from,
          to: days.d3,
          days: expectedDays(from, days.d3, figures),
          total: { bytes_in: 4800, bytes_out: 11_000 },
        });
        expect(res.body.data.days).toHaveLength(30);

        const onlyTo = await getUsage(t, isp.tenant.token, service.id, { to: days.d2 });
        expectSuccess(onlyTo);
        expect(onlyTo.body.data).toMatchObject({
          from: addDays(days.d2, -29),
          to: days.d2,
          total: { bytes_in: 4100, bytes_out: 10_100 },
        });

        const onlyFrom = await getUsage(t, isp.tenant.token, service.id, { from: days.d2 });
        expectSuccess(onlyFrom);
        expect(onlyFrom.body.data).toMatchObject({
          from: days.d2,
          to: days.d3,
          days: expectedDays(days.d2, days.d3, figures),
          total: { bytes_in: 3300, bytes_out: 4000 },
        });
      } finally {
        clock.unpin();
      }
    });

    it('should answer 400 invalid_query (field from) for from after to and for more than 366 days, and take exactly 366', async () => {
      const isp = await newIsp();
      const { service } = await createService(t, isp.tenant.token, isp.subscriberId, {
        plan_id: isp.plan.id,
      });
      const usage = (q: Record<string, string>) => getUsage(t, isp.tenant.token, service.id, q);
      expectError(await usage({ from: '2026-03-02', to: '2026-03-01' }), 400, 'invalid_query', 'from');
      expectError(await usage({ from: '2025-01-01', to: '2026-01-02' }), 400, 'invalid_query', 'from');
      expectError(await usage({ from: '2024-02-29', to: '2025-03-01' }), 400, 'invalid_query', 'from');

      const full = await usage({ from: '2025-01-02', to: '2026-01-02' });
      expectSuccess(full);
      expect(full.body.data.days).toHaveLength(366);
      expect(full.body.data.total).toEqual({ bytes_in: 0, bytes_out: 0 });
      const leap = await usage({ from: '2024-03-01', to: '2025-03-01' });
      expectSuccess(leap);
      expect(leap.body.data.days).toHaveLength(366);
    });

    it.each([
      ['from', '2026-02-30'],
      ['from', '2026/01/01'],
      ['to', '2026-1-5'],
      ['to', 'today'],
      ['from', '2026-01-01T00:00:00Z'],
    ])('should answer 400 invalid_query (field %s) for the malformed date %s', async (field, value) => {
      const isp = await newIsp();
      const { service } = await createService(t, isp.tenant.token, isp.subscriberId, {
        plan_id: isp.plan.id,
      });
      const other: Record<string, string> = field === 'from' ? { to: '2026-03-01' } : { from: '2026-01-01' };
      expectError(
        await getUsage(t, isp.tenant.token, service.id, { ...other, [field]: value }),
        400,
        'invalid_query',
        field,
      );
    });
  });

  // ---------------------------------------------------------------------------------------------------------------
  describe('Disconnect and CoA outcome of orders', () => {
    const fakes: FakeNas[] = [];
    const registered: { token: string; id: string }[] = [];

    afterEach(async () => {
      for (const nas of registered.splice(0)) {
        await deleteNas(t, nas.token, nas.id);
      }
      await Promise.all(fakes.splice(0).map((fake) => fake.close()));
    });

    /** A fake NAS on a fresh loopback address, registered by the ISP with its secret and port. */
    async function fakeNasOf(isp: Isp): Promise<{ fake: FakeNas; nas: Nas; secret: string }> {
      const secret = uniqueSecret('coa');
      const fake = await startFakeNas({ address: randomLoopback(), secret });
      fakes.push(fake);
      const res = await postNas(
        t,
        isp.tenant.token,
        nasBody({ ip: fake.address, secret, coa_port: fake.port, type: 'mikrotik' }),
      );
      if (res.status !== 201) {
        throw new Error(
          `register the fake NAS at ${fake.address}: ${res.status} ${JSON.stringify(res.body)}`,
        );
      }
      const nas = res.body.data as Nas;
      registered.push({ token: isp.tenant.token, id: nas.id });
      return { fake, nas, secret };
    }

    /** An open radacct session (no Stop) of the username on `nasIp`. */
    async function openSession(username: string, nasIp: string, framedIp: string | null = '100.64.7.9') {
      const acctSessionId = uniqueAcctSessionId();
      const start = after(new Date(), 1);
      const radacctId = await insertRadacct(t, {
        acctsessionid: acctSessionId,
        username,
        nasipaddress: nasIp,
        acctstarttime: start,
        acctupdatetime: start,
        framedipaddress: framedIp,
      });
      return { acctSessionId, radacctId };
    }

    /** An active service with an open session on a registered fake NAS. */
    async function online(planOverrides: Record<string, unknown> = {}) {
      const isp = await newIsp(planOverrides);
      const { fake, nas } = await fakeNasOf(isp);
      const { service, activation } = await activeService(isp);
      const session = await openSession(service.radius_username, nas.ip);
      return { isp, fake, nas, service, activation, session };
    }

    it('should disconnect an online service on suspend: order.disconnect acked, one signed Disconnect-Request', async () => {
      const { isp, fake, nas, service, activation, session } = await online();
      expect(activation).toMatchObject({ action: 'activate', disconnect: null, coa: null });
      const order = await act(isp, service.id, { action: 'suspend', reason: 'non_payment' });
      expect(order).toMatchObject({ action: 'suspend', status: 'completed', disconnect: 'acked', coa: null });
      expect(fake.received).toHaveLength(1);
      const [sent] = fake.received;
      expect(sent).toMatchObject({ code: 'Disconnect-Request', authenticatorValid: true });
      expect(sent.attributes).toMatchObject({
        'User-Name': service.radius_username,
        'Acct-Session-Id': session.acctSessionId,
        'NAS-IP-Address': nas.ip,
        'Framed-IP-Address': '100.64.7.9',
      });
      expect(sent.attributes).not.toHaveProperty('Mikrotik-Rate-Limit');
      expect(await getOrder(t, isp.tenant.token, order.id)).toEqual(order);
      expect((await getService(t, isp.tenant.token, service.id)).status).toBe('suspended');
    });

    it('should record nak when the NAS answers Disconnect-NAK', async () => {
      const { isp, fake, service } = await online();
      fake.answer('nak');
      const order = await act(isp, service.id, { action: 'suspend' });
      expect(order).toMatchObject({ disconnect: 'nak', coa: null });
      expect(fake.received).toHaveLength(1);
      expect((await getService(t, isp.tenant.token, service.id)).status).toBe('suspended');
    });

    it('should record timeout when the NAS stays silent, after sending the request 1 + RADIUS_COA_RETRIES times', async () => {
      const { isp, fake, service, session } = await online();
      fake.answer('silent');
      const order = await act(isp, service.id, { action: 'suspend' });
      expect(order).toMatchObject({ disconnect: 'timeout', coa: null });
      expect(fake.received).toHaveLength(2);
      for (const sent of fake.received) {
        expect(sent).toMatchObject({
          code: 'Disconnect-Request',
          authenticatorValid: true,
          identifier: fake.received[0].identifier,
          attributes: { 'Acct-Session-Id': session.acctSessionId },
        });
      }
    });

    it('should sign with the NAS’s current secret: a wrong one gets no answer (timeout), the secret PATCHed gets acked', async () => {
      const isp = await newIsp();
      const { fake, nas, secret } = await fakeNasOf(isp);
      expectSuccess(await patchNas(t, isp.tenant.token, nas.id, { secret: uniqueSecret('wrong') }));
      const { service } = await activeService(isp);
      await openSession(service.radius_username, nas.ip);
      expect(await act(isp, service.id, { action: 'suspend' })).toMatchObject({ disconnect: 'timeout' });
      expect(fake.received.map((sent) => sent.authenticatorValid)).toEqual([false, false]);

      fake.clear();
      expectSuccess(await patchNas(t, isp.tenant.token, nas.id, { secret }));
      await act(isp, service.id, { action: 'resume' });
      expect(await act(isp, service.id, { action: 'terminate' })).toMatchObject({ disconnect: 'acked' });
      expect(fake.received.map((sent) => sent.authenticatorValid)).toEqual([true]);
    });

    it('should send to the NAS’s current coa_port', async () => {
      const isp = await newIsp();
      const { fake, nas } = await fakeNasOf(isp);
      const elsewhere = fake.port === 65535 ? fake.port - 1 : fake.port + 1;
      expectSuccess(await patchNas(t, isp.tenant.token, nas.id, { coa_port: elsewhere }));
      const { service } = await activeService(isp);
      await openSession(service.radius_username, nas.ip);
      expect(await act(isp, service.id, { action: 'suspend' })).toMatchObject({ disconnect: 'timeout' });
      expect(fake.received).toEqual([]);

      expectSuccess(await patchNas(t, isp.tenant.token, nas.id, { coa_port: fake.port }));
      await act(isp, service.id, { action: 'resume' });
      expect(await act(isp, service.id, { action: 'suspend' })).toMatchObject({ disconnect: 'acked' });
      expect(fake.received).toHaveLength(1);
    });

    it('should record no_session and send nothing when the service’s sessions are all stopped', async () => {
      const { isp, fake, service, session } = await online();
      await updateRadacct(t, session.radacctId, {
        acctstoptime: new Date().toISOString(),
        acctterminatecause: 'User-Request',
      });
      const order = await act(isp, service.id, { action: 'suspend' });
      expect(order).toMatchObject({ disconnect: 'no_session', coa: null });
      expect(fake.received).toEqual([]);
    });

    it('should record unknown_nas for a session on an address the tenant did not register (even if another tenant did)', async () => {
      const isp = await newIsp();
      const { service } = await activeService(isp);
      await openSession(service.radius_username, randomNasIp());
      expect(await act(isp, service.id, { action: 'suspend' })).toMatchObject({ disconnect: 'unknown_nas' });

      const other = await newIsp();
      const { fake: othersFake, nas: othersNas } = await fakeNasOf(other);
      const second = await newIsp();
      const { service: victim } = await activeService(second);
      await openSession(victim.radius_username, othersNas.ip);
      expect(await act(second, victim.id, { action: 'suspend' })).toMatchObject({
        disconnect: 'unknown_nas',
      });
      expect(othersFake.received).toEqual([]);
    });

    it('should record the worst outcome over the open sessions: timeout > unknown_nas > nak > acked', async () => {
      const isp = await newIsp();
      const acking = await fakeNasOf(isp);
      const naking = await fakeNasOf(isp);
      const silent = await fakeNasOf(isp);
      naking.fake.answer('nak');
      silent.fake.answer('silent');
      const { service } = await activeService(isp);
      const suspendAndResume = async () => {
        const order = await act(isp, service.id, { action: 'suspend' });
        await act(isp, service.id, { action: 'resume' });
        return order.disconnect;
      };

      await openSession(service.radius_username, acking.nas.ip);
      expect(await suspendAndResume()).toBe('acked');
      await openSession(service.radius_username, naking.nas.ip);
      expect(await suspendAndResume()).toBe('nak');
      await openSession(service.radius_username, randomNasIp());
      expect(await suspendAndResume()).toBe('unknown_nas');
      await openSession(service.radius_username, silent.nas.ip);
      expect(await suspendAndResume()).toBe('timeout');
      expect(acking.fake.received).toHaveLength(4);
      expect(naking.fake.received).toHaveLength(3);
      expect(silent.fake.received).toHaveLength(2);
    });

    it('should send a CoA-Request with the new plan’s rate on change_plan while online: order.coa acked', async () => {
      const { isp, fake, nas, service, session } = await online({
        download_kbps: 50_000,
        upload_kbps: 10_000,
      });
      const faster: ServicePlan = await createPlan(t, isp.tenant.token, {
        download_kbps: 300_000,
        upload_kbps: 75_000,
      });
      const order = await act(isp, service.id, { action: 'change_plan', plan_id: faster.id });
      expect(order).toMatchObject({
        action: 'change_plan',
        status: 'completed',
        coa: 'acked',
        disconnect: null,
      });
      expect(fake.received).toHaveLength(1);
      const [sent] = fake.received;
      expect(sent).toMatchObject({ code: 'CoA-Request', authenticatorValid: true });
      expect(sent.attributes).toMatchObject({
        'User-Name': service.radius_username,
        'Acct-Session-Id': session.acctSessionId,
        'NAS-IP-Address': nas.ip,
        'Mikrotik-Rate-Limit': '75000k/300000k',
        'WISPr-Bandwidth-Max-Down': 300_000_000,
        'WISPr-Bandwidth-Max-Up': 75_000_000,
      });
      expect((await getService(t, isp.tenant.token, service.id)).plan_id).toBe(faster.id);
    });

    it('should record coa no_session for change_plan while offline, and nak when the NAS refuses', async () => {
      const isp = await newIsp();
      const { fake, nas } = await fakeNasOf(isp);
      const { service } = await activeService(isp);
      const next = await createPlan(t, isp.tenant.token, { download_kbps: 20_000, upload_kbps: 5000 });
      expect(await act(isp, service.id, { action: 'change_plan', plan_id: next.id })).toMatchObject({
        coa: 'no_session',
        disconnect: null,
      });
      expect(fake.received).toEqual([]);
      await openSession(service.radius_username, nas.ip);
      fake.answer('nak');
      expect(await act(isp, service.id, { action: 'change_plan', plan_id: isp.plan.id })).toMatchObject({
        coa: 'nak',
        disconnect: null,
      });
      expect(fake.received.map((sent) => sent.code)).toEqual(['CoA-Request']);
    });

    it('should disconnect an online service on terminate (no Framed-IP-Address for a session without one)', async () => {
      const isp = await newIsp();
      const { fake, nas } = await fakeNasOf(isp);
      const { service } = await activeService(isp);
      const session = await openSession(service.radius_username, nas.ip, null);
      const order = await act(isp, service.id, { action: 'terminate' });
      expect(order).toMatchObject({ action: 'terminate', disconnect: 'acked', coa: null });
      expect(fake.received).toHaveLength(1);
      expect(fake.received[0]).toMatchObject({
        code: 'Disconnect-Request',
        authenticatorValid: true,
        attributes: {
          'User-Name': service.radius_username,
          'Acct-Session-Id': session.acctSessionId,
          'NAS-IP-Address': nas.ip,
        },
      });
      expect(fake.received[0].attributes).not.toHaveProperty('Framed-IP-Address');
      expect((await getService(t, isp.tenant.token, service.id)).status).toBe('terminated');
    });

    it('should leave disconnect and coa null on activate, resume and modify, sending nothing even while online', async () => {
      const isp = await newIsp();
      const { fake, nas } = await fakeNasOf(isp);
      const pppoe = uniquePppoeUsername('online');
      // Online before its activation completes (a session FreeRADIUS already accounts for).
      await openSession(`${isp.tenant.slug}/${pppoe}`, nas.ip);
      const { activation, service } = await activeService(isp, { pppoe_username: pppoe });
      expect(activation).toMatchObject({ action: 'activate', disconnect: null, coa: null });
      expect(fake.received).toEqual([]);

      const suspend = await act(isp, service.id, { action: 'suspend' });
      expect(suspend.disconnect).toBe('acked');
      fake.clear();
      const resume = await act(isp, service.id, { action: 'resume' });
      expect(resume).toMatchObject({ action: 'resume', disconnect: null, coa: null });

      const patched = await request(t.http)
        .patch(`/api/v1/services/${service.id}`)
        .set(bearer(isp.tenant.token))
        .send({ pppoe_password: 'another-password-1' });
      expectSuccess(patched);
      const orders = await request(t.http)
        .get('/api/v1/provisioning-orders')
        .query({ service_id: service.id, limit: '1' })
        .set(bearer(isp.tenant.token));
      expectList(orders);
      expect(orders.body.data[0].action).toBe('modify');
      expect(await completed(isp.tenant.token, orders.body.data[0].id)).toMatchObject({
        disconnect: null,
        coa: null,
      });
      expect(fake.received).toEqual([]);
    });

    it('should show disconnect and coa null while an order is not completed', async () => {
      const { isp, service } = await online();
      const res = await postAction(t, isp.tenant.token, service.id, { action: 'suspend' });
      expectSuccess(res, 202);
      expect(res.body.data).toMatchObject({ disconnect: null, coa: null });
      await completed(isp.tenant.token, res.body.data.id);
    });
  });
});
