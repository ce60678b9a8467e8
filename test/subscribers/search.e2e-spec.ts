import { randomBytes } from 'node:crypto';
import request, { type Response } from 'supertest';
import { expectError, expectList } from '../support/envelope';
import { bearer } from '../support/factories';
import { createService, PROVISIONING_SCOPES } from '../support/provisioning-factory';
import { createSubscriber, type SubscriberRecord } from '../support/subscriber-factory';
import { createTenantWithToken, type TenantWithToken, type TestApp, tenantSuite } from '../support/test-app';
import { type SearchTextSample, SearchTextStatistics } from '../../src/subscribers/search-text-sample';
import { SubscriberSearchRepository } from '../../src/subscribers/subscriber-search.repository';

/** A word no other subscriber of the run holds, so a search finds only what the test made. */
const word = (prefix: string) => `${prefix}${randomBytes(4).toString('hex')}`;

describe('GET /api/v1/subscribers?q= (search)', () => {
  let t: TestApp;
  let tenant: TenantWithToken;
  tenantSuite(PROVISIONING_SCOPES, (suite) => ({ t, tenant } = suite));

  const search = (query: Record<string, string>, token = tenant.token): Promise<Response> =>
    request(t.http).get('/api/v1/subscribers').query(query).set(bearer(token));

  /** The ids a search answers, in its order (one page of up to 100). */
  async function found(query: Record<string, string>): Promise<string[]> {
    const res = await search({ limit: '100', ...query });
    expectList(res);
    return (res.body.data as SubscriberRecord[]).map((item) => item.id);
  }

  it('should require authentication', async () => {
    const res = await request(t.http).get('/api/v1/subscribers').query({ q: 'ada' });
    expectError(res, 401, 'authentication_required');
  });

  it('should find subscribers by part of the name, case-insensitively, in the full list shape', async () => {
    const surname = word('Lovelace');
    const ada = await createSubscriber(t, tenant.token, { full_name: `Ada ${surname}` });
    const res = await search({ q: surname.toUpperCase().slice(2) });
    expectList(res);
    expect(res.body.data.map((item: SubscriberRecord) => item.id)).toEqual([ada.id]);
    expect(res.body.data[0]).toMatchObject({ id: ada.id, full_name: `Ada ${surname}`, status: 'prospect' });
  });

  it('should find subscribers by email, external id, address and phone written in any form', async () => {
    const key = word('k');
    const city = word('Springfield');
    const number = `+1415${String(Math.floor(Math.random() * 1e7)).padStart(7, '0')}`;
    const byEmail = await createSubscriber(t, tenant.token, { email: `${key}@example.net` });
    const byExternal = await createSubscriber(t, tenant.token, { external_id: `crm-${key}-7` });
    const byCity = await createSubscriber(t, tenant.token, { address: { line1: '1 Way', city } });
    const byPhone = await createSubscriber(t, tenant.token, { phone: number });
    expect(await found({ q: `${key}@EXAMPLE.net` })).toEqual([byEmail.id]);
    expect(await found({ q: `crm-${key}` })).toEqual([byExternal.id]);
    expect(await found({ q: city.toLowerCase() })).toEqual([byCity.id]);
    const spaced = `+1 (${number.slice(2, 5)}) ${number.slice(5, 8)}-${number.slice(8)}`;
    expect(await found({ q: spaced })).toEqual([byPhone.id]);
    expect(await found({ q: `00${number.slice(1)}` })).toEqual([byPhone.id]);
    expect(await found({ q: `${number.slice(5, 8)} ${number.slice(8)}` })).toContain(byPhone.id);
  });

  it("should find a subscriber by part of a live service's PPPoE username, exactly or not", async () => {
    const subscriber = await createSubscriber(t, tenant.token, { status: 'active' });
    const username = word('pppoe.search.');
    await createService(t, tenant.token, subscriber.id, { pppoe_username: username });
    expect(await found({ q: username })).toEqual([subscriber.id]);
    expect(await found({ q: username.slice(4).toUpperCase() })).toEqual([subscriber.id]);
    expect(await found({ q: `${username}x` })).toEqual([]);
  });

  it('should rank an exact key first, then the closer match, then the newest', async () => {
    const name = word('Babbage');
    const partial = await createSubscriber(t, tenant.token, { full_name: `Charles ${name}son of Kent` });
    const close = await createSubscriber(t, tenant.token, { full_name: `Charles ${name}` });
    const older = await createSubscriber(t, tenant.token, { full_name: `Mr ${name}` });
    const newer = await createSubscriber(t, tenant.token, { full_name: `Mr ${name}` });
    const exact = await createSubscriber(t, tenant.token, { full_name: 'Someone Else', external_id: name });
    expect(await found({ q: `Charles ${name}` })).toEqual([close.id, partial.id]);
    expect(await found({ q: name })).toEqual([exact.id, newer.id, older.id, close.id, partial.id]);
  });

  it('should page a search by its own cursor, in rank order, without repeats, and refuse a list cursor', async () => {
    const name = word('Hopper');
    const made: string[] = [];
    for (let i = 0; i < 5; i++) {
      made.push(
        (await createSubscriber(t, tenant.token, { full_name: `Grace ${name} ${'x'.repeat(i)}` })).id,
      );
    }
    const all = await found({ q: name });
    expect([...all].sort()).toEqual([...made].sort());
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const res = await search({ q: name, limit: '2', ...(cursor ? { starting_after: cursor } : {}) });
      expectList(res);
      seen.push(...res.body.data.map((item: SubscriberRecord) => item.id));
      cursor = res.body.meta.pagination.next_cursor ?? undefined;
      expect(res.body.meta.pagination.has_more).toBe(cursor !== undefined);
    } while (cursor);
    expect(seen).toEqual(all);
    const list = await search({ limit: '1' });
    const listCursor = list.body.meta.pagination.next_cursor as string;
    expectError(
      await search({ q: name, starting_after: listCursor }),
      400,
      'invalid_cursor',
      'starting_after',
    );
    const searchCursor = (await search({ q: name, limit: '1' })).body.meta.pagination.next_cursor as string;
    expectError(await search({ starting_after: searchCursor }), 400, 'invalid_cursor', 'starting_after');
  });

  it('should combine the search with the other filters, status as a comma list', async () => {
    const name = word('Turing');
    const active = await createSubscriber(t, tenant.token, { full_name: `Alan ${name}`, status: 'active' });
    const pending = await createSubscriber(t, tenant.token, { full_name: `Alan ${name}`, status: 'pending' });
    await createSubscriber(t, tenant.token, { full_name: `Alan ${name}`, status: 'prospect' });
    expect(await found({ q: name, status: 'active,pending' })).toEqual([pending.id, active.id]);
    expect(await found({ q: name, status: 'active' })).toEqual([active.id]);
  });

  it("should never find another tenant's subscribers", async () => {
    const name = word('Noether');
    const other = await createTenantWithToken(t, PROVISIONING_SCOPES);
    const theirs = await createSubscriber(t, other.token, { full_name: `Emmy ${name}` });
    await createService(t, other.token, theirs.id, { pppoe_username: `${name.toLowerCase()}.login` });
    expect(await found({ q: name })).toEqual([]);
    expect(await found({ q: `${name.toLowerCase()}.login` })).toEqual([]);
  });

  it('should take %, _, backslashes, quotes and other scripts literally', async () => {
    const tag = word('lit');
    const odd = await createSubscriber(t, tenant.token, {
      full_name: `O'Brien 100%_\\ ${tag} Ærøskøbing 東京`,
    });
    const plain = await createSubscriber(t, tenant.token, { full_name: `OBrien 100ab ${tag}` });
    expect(await found({ q: `100%_\\ ${tag}` })).toEqual([odd.id]);
    expect(await found({ q: `O'Brien` })).toContain(odd.id);
    expect(await found({ q: `Ærøskøbing 東京` })).toContain(odd.id);
    expect(await found({ q: tag })).toEqual(expect.arrayContaining([odd.id, plain.id]));
    for (const q of ['%%%', '___', '\\\\\\', "'; DROP TABLE subscribers; --", '"""', '🙂🙂🙂']) {
      expectList(await search({ q }));
    }
  });

  describe('only the rare words through the index (docs/decisions.md, "Search")', () => {
    let own: TenantWithToken;
    let common: string;
    const made: Record<string, string> = {};
    beforeAll(async () => {
      own = await createTenantWithToken(t, PROVISIONING_SCOPES);
      // Letters only, so no digit of it matches the rare words'.
      common = word('Seedling').replace(/[0-9]/g, (digit) => 'ghijklmnop'[Number(digit)]);
      const names: Record<string, string> = {
        exact: `Seed ${common} 4711`,
        longer: `Seed ${common} 47110`,
        inside: `Seed ${common} 14711`,
        reversed: `Other 4711 ${common}`,
        short: `Seed ${common} 471`,
        hyphen: `Seed ${common}-4711 Ltd`,
        accents: `Zoë ${common} ÆRØSKØBING`,
        alone: 'Nobody 4711',
      };
      for (const [key, name] of Object.entries(names)) {
        made[key] = (await createSubscriber(t, own.token, { full_name: name, external_id: `ext-${key}` })).id;
      }
    });
    afterEach(() => jest.restoreAllMocks());

    /** A sample of `count` values, each holding every one of `words` (lower-cased, as the index's values are). */
    const sampleHolding = (words: string[], count = 100): SearchTextSample =>
      Array.from({ length: count }, (_, i) => ({
        text: `${words.join(' ')} ${i}`.toLowerCase(),
        share: 1 / count,
      }));

    /** What a search answers (ids in order) with `sample` as the statistics, and the rare words it looked up. */
    async function withSample(q: string, sample: SearchTextSample) {
      jest.spyOn(t.app.get(SearchTextStatistics), 'sample').mockResolvedValue(sample);
      const page = jest.spyOn(t.app.get(SubscriberSearchRepository), 'page');
      const res = await search({ q, limit: '100' }, own.token);
      expectList(res);
      const [, , looked] = page.mock.calls[0];
      jest.restoreAllMocks();
      return {
        ids: (res.body.data as SubscriberRecord[]).map((item) => item.id),
        rare: looked.rareWords ?? null,
      };
    }

    it.each([
      ['a common word and a rare one', (c: string) => `${c} 4711`, ['4711'], ['exact', 'longer']],
      ['a rare word and a common one', (c: string) => `4711 ${c}`, ['4711'], ['reversed']],
      ['a common word, punctuation and a rare word', (c: string) => `${c}-4711`, ['4711'], ['hyphen']],
      [
        'only common words',
        (c: string) => `seed ${c}`,
        null,
        ['exact', 'longer', 'inside', 'short', 'hyphen'],
      ],
      ['only a rare word', () => '4711', null, ['exact', 'longer', 'inside', 'reversed', 'hyphen', 'alone']],
      ['a common word and a short one', (c: string) => `${c} 47`, null, ['exact', 'longer', 'short']],
      [
        'a common word in capitals and a rare accented one',
        (c: string) => `${c.toUpperCase()} æRøSKØbing`,
        ['æRøSKØbing'],
        ['accents'],
      ],
      ['an accented word written without its accent', (c: string) => `Zoe ${c}`, ['Zoe'], []],
    ])('should answer %s exactly as the whole text through the index does', async (_what, q, rare, keys) => {
      const text = q(common);
      const today = await withSample(text, null);
      const sampled = await withSample(text, sampleHolding(['seed', common]));
      expect(today.rare).toBeNull();
      expect(sampled.rare).toEqual(rare);
      expect(sampled.ids).toEqual(today.ids);
      expect([...today.ids].sort()).toEqual(keys.map((key) => made[key]).sort());
    });

    it('should rank the same either way, and keep the whole text when every word is common', async () => {
      const text = `${common} 4711`;
      const today = await withSample(text, null);
      expect(today.ids).toEqual([made.exact, made.longer]);
      expect((await withSample(text, sampleHolding(['seed', common]))).ids).toEqual(today.ids);
      const allCommon = await withSample(text, sampleHolding([common, '4711']));
      expect(allCommon.rare).toBeNull();
      expect(allCommon.ids).toEqual(today.ids);
      const tooFew = await withSample(text, sampleHolding(['seed', common], 5));
      expect(tooFew.rare).toBeNull();
      expect(tooFew.ids).toEqual(today.ids);
    });

    it("should read the sample from the table's statistics once it is analyzed", async () => {
      await t.dataSource.query('ANALYZE subscribers');
      const sample = await t.app.get(SearchTextStatistics).read(t.dataSource.manager);
      expect(sample).not.toBeNull();
      expect(sample!.length).toBeGreaterThan(0);
      for (const value of sample!) {
        expect(value.text).toBe(value.text.toLowerCase());
        expect(value.share).toBeGreaterThan(0);
      }
      const total = sample!.reduce((sum, value) => sum + value.share, 0);
      expect(total).toBeGreaterThan(0.99);
      expect(total).toBeLessThan(1.01);
    });
  });

  it.each([
    ['shorter than 3 characters', 'ab'],
    ['longer than 200 characters', 'a'.repeat(201)],
    ['empty', ''],
    ['holding a NUL', 'ab\u0000c'],
  ])('should refuse a q %s with 400 invalid_query', async (_what, q) => {
    expectError(await search({ q }), 400, 'invalid_query', 'q');
  });
});

describe('GET /api/v1/subscribers?phone= and comma lists', () => {
  let t: TestApp;
  let tenant: TenantWithToken;
  tenantSuite(['subscribers:read', 'subscribers:write'], (suite) => ({ t, tenant } = suite));

  const list = (query: Record<string, string>) =>
    request(t.http).get('/api/v1/subscribers').query(query).set(bearer(tenant.token));

  it('should filter by the exact phone, written in any international form', async () => {
    const number = `+4420${String(Math.floor(Math.random() * 1e8)).padStart(8, '0')}`;
    const subscriber = await createSubscriber(t, tenant.token, { phone: number });
    for (const form of [number, `+44 20 ${number.slice(5, 9)} ${number.slice(9)}`, `00${number.slice(1)}`]) {
      const res = await list({ phone: form });
      expectList(res);
      expect(res.body.data.map((item: SubscriberRecord) => item.id)).toEqual([subscriber.id]);
    }
    const res = await list({ phone: `${number.slice(0, -1)}${number.endsWith('9') ? '8' : '9'}` });
    expect(res.body.data).toEqual([]);
  });

  it.each(['020 7946 0000', 'ada', '+0123', '+1234567890123456'])(
    'should refuse phone=%p, which is no international number, naming the field',
    async (phone) => {
      expectError(await list({ phone }), 400, 'invalid_query', 'phone');
    },
  );

  it('should take status as a comma list or a repeated parameter, duplicates harmless', async () => {
    const active = await createSubscriber(t, tenant.token, { status: 'active' });
    const pending = await createSubscriber(t, tenant.token, { status: 'pending' });
    const ids = async (query: string) => {
      const res = await request(t.http)
        .get(`/api/v1/subscribers?limit=100&${query}`)
        .set(bearer(tenant.token));
      expectList(res);
      return (res.body.data as SubscriberRecord[]).map((item) => item.id);
    };
    const both = await ids('status=active,pending');
    expect(both).toEqual(expect.arrayContaining([active.id, pending.id]));
    expect(await ids('status=active&status=pending')).toEqual(both);
    expect(await ids('status=pending,pending,active')).toEqual(both);
    expect(await ids('status=pending')).toContain(pending.id);
    expect(await ids('status=pending')).not.toContain(active.id);
  });

  it.each([
    ['an unknown item, named', 'active,bogus', /"bogus"/],
    ['an empty item', 'active,,pending', /empty item/],
    ['a trailing comma', 'active,', /empty item/],
  ])('should refuse a status list with %s (400 invalid_query)', async (_what, status, message) => {
    const res = await list({ status });
    expectError(res, 400, 'invalid_query', 'status');
    expect(res.body.error.message).toMatch(message);
  });
});
