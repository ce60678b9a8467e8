import request, { type Response } from 'supertest';
import { TaxRatesRepository } from '../../src/billing/taxes/tax-rates.repository';
import { expectError, expectList, expectSuccess, expectNotFound, successRecord } from '../support/envelope';
import { bearer } from '../support/factories';
import { createPlan, postPlan, planBody } from '../support/provisioning-factory';
import {
  type Body,
  createBillingProfile,
  createSubscriber,
  ISO_MS,
  listEvents,
  postBillingProfile,
  postSubscriber,
  subscriberBody,
  SUBSCRIBER_KEYS,
} from '../support/subscriber-factory';
import { createTenantWithToken, type TenantWithToken, type TestApp, tenantSuite } from '../support/test-app';

const SCOPES = [
  'billing:read',
  'billing:write',
  'events:read',
  'provisioning:read',
  'provisioning:write',
  'subscribers:read',
  'subscribers:write',
];
const TAX_RATE_ID = /^txr_[0-9A-Z]{26}$/;
const TAX_RATE_KEYS = [
  'active',
  'compound',
  'country',
  'created_at',
  'description',
  'first_used_at',
  'id',
  'inclusive',
  'name',
  'percentage',
  'region',
  'updated_at',
];

interface TaxRate {
  id: string;
  name: string;
  percentage: string;
  inclusive: boolean;
  compound: boolean;
  active: boolean;
  first_used_at: string | null;
  updated_at: string;
}

/** Issue 29 items 1 and 2: the tax rates resource and the lists that say which rates apply. */
describe('Billing: tax rates', () => {
  let t: TestApp;
  let tenant: TenantWithToken;

  const post = (body: unknown, token = tenant.token) =>
    request(t.http)
      .post('/api/v1/tax-rates')
      .set(bearer(token))
      .send(body as object);
  const get = (path: string, token = tenant.token) => request(t.http).get(path).set(bearer(token));
  const patch = (path: string, body: Body, headers: Record<string, string> = {}, token = tenant.token) =>
    request(t.http).patch(path).set(bearer(token)).set(headers).send(body);

  async function createRate(overrides: Body = {}, token = tenant.token): Promise<TaxRate> {
    const res = await post({ name: 'VAT 21%', percentage: '21', ...overrides }, token);
    expectSuccess(res, 201);
    return res.body.data as TaxRate;
  }

  /** The rate as an invoice leaves it: used, through the repository invoicing calls. */
  async function markUsed(tenantId: string, ids: string[]): Promise<void> {
    await t.app.get(TaxRatesRepository).markUsed(t.dataSource.manager, tenantId, ids);
  }

  tenantSuite(SCOPES, (suite) => ({ t, tenant } = suite));

  describe('POST, GET and PATCH /api/v1/tax-rates', () => {
    it('should answer 201 with the rate, its percentage with four decimals and the defaults', async () => {
      const res = await post({ name: 'VAT 21%', percentage: '21' });
      expect(successRecord(res, TAX_RATE_KEYS, 201)).toEqual({
        id: expect.stringMatching(TAX_RATE_ID),
        name: 'VAT 21%',
        percentage: '21.0000',
        inclusive: false,
        compound: false,
        country: null,
        region: null,
        description: null,
        active: true,
        first_used_at: null,
        created_at: expect.stringMatching(ISO_MS),
        updated_at: res.body.data.created_at,
      });
      const read = await get(`/api/v1/tax-rates/${res.body.data.id}`);
      expectSuccess(read);
      expect(read.body.data).toEqual(res.body.data);
      expect(read.headers.etag).toBeDefined();
    });

    it('should keep every field given', async () => {
      const body = {
        name: 'QST',
        percentage: '9.975',
        inclusive: true,
        compound: true,
        country: 'CA',
        region: 'Quebec',
        description: 'Quebec sales tax',
        active: false,
      };
      const rate = await createRate(body);
      expect(rate).toMatchObject({ ...body, percentage: '9.9750' });
    });

    it('should refuse a token without billing:write (403) and no token (401)', async () => {
      const reader = await createTenantWithToken(t, ['billing:read']);
      expectError(await post({ name: 'x', percentage: '1' }, reader.token), 403, 'insufficient_scope');
      expectError(
        await request(t.http).post('/api/v1/tax-rates').send({ name: 'x', percentage: '1' }),
        401,
        'authentication_required',
      );
    });

    it.each<[string, Body, number, string, string]>([
      ['no name', { percentage: '21' }, 400, 'missing_field', 'name'],
      ['a blank name', { name: '  ', percentage: '21' }, 422, 'validation_failed', 'name'],
      [
        'a lower-case country',
        { name: 'x', percentage: '1', country: 'nl' },
        422,
        'validation_failed',
        'country',
      ],
      [
        'a three-letter country',
        { name: 'x', percentage: '1', country: 'NLD' },
        422,
        'validation_failed',
        'country',
      ],
      [
        'inclusive as a string',
        { name: 'x', percentage: '1', inclusive: 'yes' },
        422,
        'validation_failed',
        'inclusive',
      ],
      ['an unknown field', { name: 'x', percentage: '1', rate: 21 }, 400, 'unknown_field', 'rate'],
    ])('should refuse %s', async (_label, body, status, code, field) => {
      expectError(await post(body), status, code, field);
    });

    it('should answer 404 not_found for a rate of another tenant or none', async () => {
      const other = await createTenantWithToken(t, SCOPES);
      const theirs = await createRate({}, other.token);
      expectNotFound(await get(`/api/v1/tax-rates/${theirs.id}`));
      expectNotFound(await get('/api/v1/tax-rates/txr_01JD3Z6W3R4T5Y6U7I8O9P0QAB'));
      expectNotFound(await patch(`/api/v1/tax-rates/${theirs.id}`, { name: 'mine' }));
    });

    it('should change the fields sent of a rate not yet used, null clearing country, region and description', async () => {
      const rate = await createRate({ country: 'NL', region: 'NH', description: 'old' });
      const res = await patch(`/api/v1/tax-rates/${rate.id}`, {
        name: 'VAT 9%',
        percentage: '9',
        inclusive: true,
        compound: true,
        country: null,
        region: null,
        description: null,
      });
      expectSuccess(res);
      expect(res.body.data).toMatchObject({
        id: rate.id,
        name: 'VAT 9%',
        percentage: '9.0000',
        inclusive: true,
        compound: true,
        country: null,
        region: null,
        description: null,
        active: true,
      });
      expect(res.body.data.updated_at >= rate.updated_at).toBe(true);
      expect((await get(`/api/v1/tax-rates/${rate.id}`)).body.data).toEqual(res.body.data);
    });

    it('should honour If-Match: 412 precondition_failed on a stale tag, the change on the current one', async () => {
      const rate = await createRate();
      const tag = (await get(`/api/v1/tax-rates/${rate.id}`)).headers.etag;
      expectSuccess(
        await patch(`/api/v1/tax-rates/${rate.id}`, { description: 'first' }, { 'If-Match': tag }),
      );
      const stale = await patch(
        `/api/v1/tax-rates/${rate.id}`,
        { description: 'second' },
        { 'If-Match': tag },
      );
      expectError(stale, 412, 'precondition_failed');
      const current = (await get(`/api/v1/tax-rates/${rate.id}`)).headers.etag;
      const res = await patch(
        `/api/v1/tax-rates/${rate.id}`,
        { description: 'second' },
        { 'If-Match': current },
      );
      expectSuccess(res);
      expect(res.body.data.description).toBe('second');
    });
  });

  describe('percentage', () => {
    it.each<[unknown, string]>([
      ['21', '21.0000'],
      ['21.5', '21.5000'],
      ['21.0000', '21.0000'],
      ['9.975', '9.9750'],
      ['0', '0.0000'],
      ['0.0001', '0.0001'],
      ['100', '100.0000'],
      ['100.0000', '100.0000'],
      ['007', '7.0000'],
      ['99.9999', '99.9999'],
    ])('should take %j and answer %j, on create and on PATCH', async (given, answered) => {
      const rate = await createRate({ percentage: given });
      expect(rate.percentage).toBe(answered);
      const other = await createRate({ percentage: '1' });
      const res = await patch(`/api/v1/tax-rates/${other.id}`, { percentage: given });
      expectSuccess(res);
      expect(res.body.data.percentage).toBe(answered);
    });

    it.each<[string, unknown]>([
      ['a number', 21],
      ['a number with decimals', 21.5],
      ['above 100', '100.0001'],
      ['101', '101'],
      ['1000', '1000'],
      ['negative', '-1'],
      ['five decimals', '21.00001'],
      ['an exponent', '1e2'],
      ['empty', ''],
      ['a leading space', ' 21'],
      ['a trailing dot', '21.'],
      ['a leading dot', '.5'],
      ['a decimal comma', '21,5'],
      ['a percent sign', '21%'],
      ['words', 'twenty-one'],
      ['NaN', 'NaN'],
      ['Infinity', 'Infinity'],
      ['a boolean', true],
      ['an array', ['21']],
      ['an object', { value: '21' }],
      ['a long string of digits', '1'.repeat(400)],
    ])(
      'should refuse %s with 422 validation_failed at percentage, on create and on PATCH',
      async (_label, value) => {
        expectError(await post({ name: 'x', percentage: value }), 422, 'validation_failed', 'percentage');
        const rate = await createRate();
        const res = await patch(`/api/v1/tax-rates/${rate.id}`, { percentage: value });
        expectError(res, 422, 'validation_failed', 'percentage');
      },
    );

    it('should answer 400 missing_field when percentage is absent or null', async () => {
      expectError(await post({ name: 'x' }), 400, 'missing_field', 'percentage');
      expectError(await post({ name: 'x', percentage: null }), 400, 'missing_field', 'percentage');
    });
  });

  describe('GET /api/v1/tax-rates', () => {
    let owner: TenantWithToken;
    let active: TaxRate[];
    let archived: TaxRate;

    beforeAll(async () => {
      owner = await createTenantWithToken(t, SCOPES);
      active = [await createRate({ name: 'A' }, owner.token), await createRate({ name: 'B' }, owner.token)];
      archived = await createRate({ name: 'C', active: false }, owner.token);
    });

    const list = async (query: string) => {
      const res = await get(`/api/v1/tax-rates${query}`, owner.token);
      expectList(res);
      return res;
    };

    it('should list the tenant’s rates newest first, and only those', async () => {
      const res = await list('');
      expect(res.body.data.map((rate: TaxRate) => rate.id)).toEqual([
        archived.id,
        active[1].id,
        active[0].id,
      ]);
    });

    it('should filter by active', async () => {
      expect((await list('?active=true')).body.data.map((rate: TaxRate) => rate.id)).toEqual([
        active[1].id,
        active[0].id,
      ]);
      expect((await list('?active=false')).body.data.map((rate: TaxRate) => rate.id)).toEqual([archived.id]);
    });

    it('should page with a cursor', async () => {
      const first = await list('?limit=2');
      expect(first.body.meta.pagination.has_more).toBe(true);
      const next = await list(`?limit=2&starting_after=${first.body.meta.pagination.next_cursor}`);
      expect(next.body.data.map((rate: TaxRate) => rate.id)).toEqual([active[0].id]);
      expect(next.body.meta.pagination.has_more).toBe(false);
    });

    it('should refuse an active filter that is not true or false', async () => {
      expectError(await get('/api/v1/tax-rates?active=yes', owner.token), 400, 'invalid_query', 'active');
    });
  });

  describe('a rate in use', () => {
    it('should answer 409 tax_rate_in_use to any change of what it computes or prints', async () => {
      const rate = await createRate({ country: 'NL', region: 'NH' });
      await markUsed(tenant.tenantId, [rate.id]);
      const used = (await get(`/api/v1/tax-rates/${rate.id}`)).body.data as TaxRate;
      expect(used.first_used_at).toMatch(ISO_MS);
      for (const [field, value] of [
        ['name', 'VAT 22%'],
        ['percentage', '22'],
        ['inclusive', true],
        ['compound', true],
        ['country', 'BE'],
        ['region', null],
      ] as const) {
        const res = await patch(`/api/v1/tax-rates/${rate.id}`, { [field]: value });
        expectError(res, 409, 'tax_rate_in_use', field);
        expect(res.body.error.message).toContain('active: false');
      }
      expect((await get(`/api/v1/tax-rates/${rate.id}`)).body.data).toEqual(used);
    });

    it('should take a PATCH that sends the same values, a description and archiving', async () => {
      const rate = await createRate();
      await markUsed(tenant.tenantId, [rate.id]);
      const same = await patch(`/api/v1/tax-rates/${rate.id}`, {
        name: rate.name,
        percentage: '21.0',
        inclusive: false,
        compound: false,
      });
      expectSuccess(same);
      expect(same.body.data.updated_at).toBe(rate.updated_at);
      const described = await patch(`/api/v1/tax-rates/${rate.id}`, { description: 'Replaced on 1 Jan' });
      expectSuccess(described);
      const archived = await patch(`/api/v1/tax-rates/${rate.id}`, { active: false });
      expectSuccess(archived);
      expect(archived.body.data).toMatchObject({ active: false, description: 'Replaced on 1 Jan' });
    });

    it('should keep the first use: markUsed again leaves first_used_at, and touches only the tenant’s rates', async () => {
      const rate = await createRate();
      await markUsed(tenant.tenantId, [rate.id]);
      const first = (await get(`/api/v1/tax-rates/${rate.id}`)).body.data.first_used_at;
      await markUsed(tenant.tenantId, [rate.id, rate.id]);
      expect((await get(`/api/v1/tax-rates/${rate.id}`)).body.data.first_used_at).toBe(first);
      const other = await createTenantWithToken(t, SCOPES);
      const theirs = await createRate({}, other.token);
      await markUsed(tenant.tenantId, [theirs.id]);
      expect((await get(`/api/v1/tax-rates/${theirs.id}`, other.token)).body.data.first_used_at).toBeNull();
    });

    it('should answer activeByIds in the order asked, archived ones marked, unknown ones left out', async () => {
      const a = await createRate({ name: 'A', percentage: '5' });
      const b = await createRate({ name: 'B', percentage: '9.975', compound: true, active: false });
      const rates = await t.app
        .get(TaxRatesRepository)
        .activeByIds(t.dataSource.manager, tenant.tenantId, [b.id, 'txr_unknown', a.id]);
      expect(rates).toEqual([
        { id: b.id, name: 'B', percentage: '9.9750', inclusive: false, compound: true, active: false },
        { id: a.id, name: 'A', percentage: '5.0000', inclusive: false, compound: false, active: true },
      ]);
    });
  });

  describe('tax_rate_ids on billing profiles, service plans and charges', () => {
    let exclusive: TaxRate[];
    let inclusive: TaxRate;
    let archived: TaxRate;
    let foreign: TaxRate;
    let subscriberId: string;

    beforeAll(async () => {
      exclusive = [
        await createRate({ name: 'E1' }),
        await createRate({ name: 'E2' }),
        await createRate({ name: 'E3' }),
        await createRate({ name: 'E4' }),
      ];
      inclusive = await createRate({ name: 'I', inclusive: true });
      archived = await createRate({ name: 'X', active: false });
      foreign = await createRate({}, (await createTenantWithToken(t, SCOPES)).token);
      subscriberId = (await createSubscriber(t, tenant.token)).id;
    });

    /** Each way a list is written, answering the response and the list it stored. */
    const writers: [string, (ids: unknown) => Promise<Response>, number][] = [
      ['a billing profile create', (ids) => postBillingProfile(t, tenant.token, profileBody(ids)), 201],
      [
        'a billing profile PATCH',
        async (ids) => {
          const profile = await createBillingProfile(t, tenant.token);
          return patch(`/api/v1/billing-profiles/${profile.id}`, { tax_rate_ids: ids });
        },
        200,
      ],
      ['a service plan create', (ids) => postPlan(t, tenant.token, planBody({ tax_rate_ids: ids })), 201],
      [
        'a service plan PATCH',
        async (ids) => {
          const plan = await createPlan(t, tenant.token);
          return patch(`/api/v1/service-plans/${plan.id}`, { tax_rate_ids: ids });
        },
        200,
      ],
      [
        'a charge',
        (ids) =>
          request(t.http)
            .post(`/api/v1/subscribers/${subscriberId}/charges`)
            .set(bearer(tenant.token))
            .send({ description: 'Router', amount: 4900, currency: 'USD', tax_rate_ids: ids }),
        201,
      ],
    ];

    function profileBody(ids: unknown): Body {
      return { name: 'Taxed', currency: 'USD', billing_day: 1, tax_rate_ids: ids };
    }

    it.each(writers)('should store and answer the list of %s', async (_label, write, status) => {
      const ids = [exclusive[1].id, exclusive[0].id];
      const res = await write(ids);
      expectSuccess(res, status);
      expect(res.body.data.tax_rate_ids).toEqual(ids);
      const empty = await write([]);
      expectSuccess(empty, status);
      expect(empty.body.data.tax_rate_ids).toEqual([]);
      const inclusiveOnly = await write([inclusive.id]);
      expectSuccess(inclusiveOnly, status);
      expect(inclusiveOnly.body.data.tax_rate_ids).toEqual([inclusive.id]);
    });

    it.each(writers)('should refuse a bad list on %s', async (_label, write) => {
      const bad: [unknown, number, string, string][] = [
        [exclusive.map((rate) => rate.id), 422, 'validation_failed', 'tax_rate_ids'],
        [[exclusive[0].id, exclusive[0].id], 422, 'validation_failed', 'tax_rate_ids.1'],
        [[exclusive[0].id, 'txr_01JD3Z6W3R4T5Y6U7I8O9P0QAB'], 422, 'invalid_reference', 'tax_rate_ids.1'],
        [[archived.id], 422, 'invalid_reference', 'tax_rate_ids.0'],
        [[exclusive[0].id, foreign.id], 422, 'invalid_reference', 'tax_rate_ids.1'],
        [[exclusive[0].id, inclusive.id], 422, 'validation_failed', 'tax_rate_ids'],
        [exclusive[0].id, 422, 'validation_failed', 'tax_rate_ids'],
        [[42], 422, 'validation_failed', 'tax_rate_ids.0'],
        [[''], 422, 'validation_failed', 'tax_rate_ids.0'],
      ];
      for (const [ids, status, code, field] of bad) {
        expectError(await write(ids), status, code, field);
      }
    });

    it('should default to [] on a profile, null on a plan and a charge, and take null where it means the profile’s', async () => {
      const profile = await createBillingProfile(t, tenant.token);
      expect(profile).toMatchObject({ tax_rate_ids: [] });
      expectError(
        await patch(`/api/v1/billing-profiles/${profile.id}`, { tax_rate_ids: null }),
        422,
        'validation_failed',
        'tax_rate_ids',
      );
      const plan = await createPlan(t, tenant.token, { tax_rate_ids: [exclusive[0].id] });
      const cleared = await patch(`/api/v1/service-plans/${plan.id}`, { tax_rate_ids: null });
      expectSuccess(cleared);
      expect(cleared.body.data.tax_rate_ids).toBeNull();
      expect((await createPlan(t, tenant.token)).tax_rate_ids).toBeNull();
      const charge = await request(t.http)
        .post(`/api/v1/subscribers/${subscriberId}/charges`)
        .set(bearer(tenant.token))
        .send({ description: 'Visit', amount: 1000, currency: 'USD' });
      expectSuccess(charge, 201);
      expect(charge.body.data.tax_rate_ids).toBeNull();
      const listed = await get(`/api/v1/subscribers/${subscriberId}/charges`);
      expect(listed.body.data.find((each: { id: string }) => each.id === charge.body.data.id)).toEqual(
        charge.body.data,
      );
    });

    it('should not check again a list a PATCH leaves as it is, though a rate of it was archived since', async () => {
      const rate = await createRate({ name: 'Soon archived' });
      const profile = await createBillingProfile(t, tenant.token, { tax_rate_ids: [rate.id] });
      const plan = await createPlan(t, tenant.token, { tax_rate_ids: [rate.id] });
      expectSuccess(await patch(`/api/v1/tax-rates/${rate.id}`, { active: false }));
      const profilePatch = await patch(`/api/v1/billing-profiles/${profile.id}`, {
        name: 'Renamed',
        tax_rate_ids: [rate.id],
      });
      expectSuccess(profilePatch);
      expect(profilePatch.body.data).toMatchObject({ name: 'Renamed', tax_rate_ids: [rate.id] });
      const planPatch = await patch(`/api/v1/service-plans/${plan.id}`, {
        price: 100,
        tax_rate_ids: [rate.id],
      });
      expectSuccess(planPatch);
      expect(planPatch.body.data).toMatchObject({ price: 100, tax_rate_ids: [rate.id] });
    });

    it('should name tax_rate_ids among the changed fields of the profile and plan events', async () => {
      const profile = await createBillingProfile(t, tenant.token);
      await patch(`/api/v1/billing-profiles/${profile.id}`, { tax_rate_ids: [exclusive[2].id] });
      const plan = await createPlan(t, tenant.token);
      await patch(`/api/v1/service-plans/${plan.id}`, { tax_rate_ids: [] });
      const profileEvent = (await listEvents(t, tenant.token, { subject_id: profile.id }))[0];
      expect(profileEvent).toMatchObject({
        type: 'billing_profile.updated',
        data: { changed_fields: ['tax_rate_ids'], object: { tax_rate_ids: [exclusive[2].id] } },
      });
      const planEvent = (await listEvents(t, tenant.token, { subject_id: plan.id }))[0];
      expect(planEvent).toMatchObject({
        type: 'service_plan.updated',
        data: { changed_fields: ['tax_rate_ids'], object: { tax_rate_ids: [] } },
      });
    });
  });

  describe('a subscriber’s tax exemption and tax id', () => {
    const EXEMPT = { tax_exempt: true, tax_exempt_reason: 'Registered charity', tax_id: 'NL123456789B01' };

    it('should keep an exemption with its reason and the tax id, on reads and in the list', async () => {
      const res = await postSubscriber(t, tenant.token, subscriberBody(EXEMPT));
      expectSuccess(res, 201);
      const read = await get(`/api/v1/subscribers/${res.body.data.id}`);
      expect(Object.keys(read.body.data).sort()).toEqual(SUBSCRIBER_KEYS);
      expect(read.body.data).toMatchObject(EXEMPT);
      const listed = await get(`/api/v1/subscribers?external_id=${read.body.data.external_id}`);
      expect(listed.body.data).toEqual([read.body.data]);
    });

    it('should default to not exempt, no reason and no tax id', async () => {
      const created = await createSubscriber(t, tenant.token);
      const read = await get(`/api/v1/subscribers/${created.id}`);
      expect(read.body.data).toMatchObject({ tax_exempt: false, tax_exempt_reason: null, tax_id: null });
    });

    it.each<[string, Body, number, string]>([
      ['an exemption without a reason', { tax_exempt: true }, 400, 'missing_field'],
      ['a reason without an exemption', { tax_exempt_reason: 'charity' }, 422, 'validation_failed'],
      [
        'a reason with tax_exempt false',
        { tax_exempt: false, tax_exempt_reason: 'x' },
        422,
        'validation_failed',
      ],
      ['a blank reason', { tax_exempt: true, tax_exempt_reason: ' ' }, 422, 'validation_failed'],
    ])('should refuse %s on create', async (_label, body, status, code) => {
      expectError(
        await postSubscriber(t, tenant.token, subscriberBody(body)),
        status,
        code,
        'tax_exempt_reason',
      );
    });

    it('should apply the same rules on PATCH: an exemption needs a reason, ending it drops the reason', async () => {
      const created = await createSubscriber(t, tenant.token);
      const path = `/api/v1/subscribers/${created.id}`;
      expectError(await patch(path, { tax_exempt: true }), 400, 'missing_field', 'tax_exempt_reason');
      expectError(
        await patch(path, { tax_exempt_reason: 'x' }),
        422,
        'validation_failed',
        'tax_exempt_reason',
      );
      const exempt = await patch(path, { tax_exempt: true, tax_exempt_reason: 'Diplomatic', tax_id: 'DE1' });
      expectSuccess(exempt);
      expect(exempt.body.data).toMatchObject({
        tax_exempt: true,
        tax_exempt_reason: 'Diplomatic',
        tax_id: 'DE1',
      });
      expectError(await patch(path, { tax_exempt_reason: null }), 400, 'missing_field', 'tax_exempt_reason');
      const reworded = await patch(path, { tax_exempt_reason: 'Embassy' });
      expect(reworded.body.data).toMatchObject({ tax_exempt: true, tax_exempt_reason: 'Embassy' });
      const ended = await patch(path, { tax_exempt: false, tax_id: null });
      expectSuccess(ended);
      expect(ended.body.data).toMatchObject({ tax_exempt: false, tax_exempt_reason: null, tax_id: null });
      const event = (
        await listEvents(t, tenant.token, { subject_id: created.id, type: 'subscriber.updated' })
      )[0];
      expect(event.data.changed_fields).toEqual(['tax_exempt', 'tax_exempt_reason', 'tax_id']);
    });

    it('should be held by the database too: an exemption without a reason is refused', async () => {
      const created = await createSubscriber(t, tenant.token);
      await expect(
        t.dataSource.query(`UPDATE subscribers SET tax_exempt = true WHERE tenant_id = $1 AND id = $2`, [
          tenant.tenantId,
          created.id,
        ]),
      ).rejects.toThrow(/chk_subscribers_tax_exempt/);
    });
  });

  describe('events', () => {
    it('should emit tax_rate.created and tax_rate.updated naming the changed fields', async () => {
      const owner = await createTenantWithToken(t, SCOPES);
      const rate = await createRate({ name: 'GST', percentage: '5' }, owner.token);
      await patch(
        `/api/v1/tax-rates/${rate.id}`,
        { percentage: '5.5', description: 'raised' },
        {},
        owner.token,
      );
      await patch(`/api/v1/tax-rates/${rate.id}`, { percentage: '5.50' }, {}, owner.token); // no change: no event
      const events = await listEvents(t, owner.token, { type: 'tax_rate.*' });
      expect(events.map((event) => event.type)).toEqual(['tax_rate.updated', 'tax_rate.created']);
      expect(events[1]).toMatchObject({ subject_id: rate.id, data: { object: rate } });
      expect(events[0]).toMatchObject({
        subject_id: rate.id,
        data: {
          changed_fields: ['percentage', 'description'],
          object: { id: rate.id, percentage: '5.5000', description: 'raised' },
        },
      });
    });
  });
});
