import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { expectError, expectList } from '../support/envelope';
import { bearer } from '../support/factories';
import { createTicket, type Ticket, TICKET_SCOPES } from '../support/ticket-factory';
import { type TenantWithToken, type TestApp, tenantSuite } from '../support/test-app';

describe('GET /api/v1/tickets?q= (search)', () => {
  let t: TestApp;
  let tenant: TenantWithToken;
  tenantSuite(TICKET_SCOPES, (suite) => ({ t, tenant } = suite));

  const search = (query: Record<string, string>) =>
    request(t.http).get('/api/v1/tickets').query(query).set(bearer(tenant.token));

  it('should require authentication', async () => {
    expectError(
      await request(t.http).get('/api/v1/tickets').query({ q: 'loss' }),
      401,
      'authentication_required',
    );
  });

  it('should rank a match of the whole subject first, then one in it, then one in the description only', async () => {
    const word = `flap${randomBytes(4).toString('hex')}`;
    const inDescription = await createTicket(t, tenant.token, {
      subject: 'Slow line',
      description: `Link ${word}s`,
    });
    const inSubject = await createTicket(t, tenant.token, { subject: `Port ${word}s`, description: 'n/a' });
    const exactSubject = await createTicket(t, tenant.token, { subject: `Port ${word}`, description: 'n/a' });
    await createTicket(t, tenant.token, { subject: 'Unrelated', description: 'nothing here' });
    const res = await search({ q: word.toUpperCase(), limit: '100' });
    expectList(res);
    expect((res.body.data as Ticket[]).map((ticket) => ticket.id)).toEqual([
      exactSubject.id,
      inSubject.id,
      inDescription.id,
    ]);
  });

  it('should page a search by rank with its own cursors, and refuse a list cursor', async () => {
    const word = `noise${randomBytes(4).toString('hex')}`;
    for (const suffix of ['', 's', ' on port 4', ' at night and at dawn']) {
      await createTicket(t, tenant.token, { subject: `Line ${word}${suffix}` });
    }
    const all = await search({ q: word, limit: '100' });
    const want = (all.body.data as Ticket[]).map((ticket) => ticket.id);
    expect(want).toHaveLength(4);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await search({ q: word, limit: '3', ...(cursor ? { starting_after: cursor } : {}) });
      expectList(res);
      seen.push(...(res.body.data as Ticket[]).map((ticket) => ticket.id));
      cursor = res.body.meta.pagination.next_cursor as string | null;
    } while (cursor);
    expect(seen).toEqual(want);
    const list = await search({ limit: '1' });
    const listCursor = list.body.meta.pagination.next_cursor as string;
    expectError(
      await search({ q: word, starting_after: listCursor }),
      400,
      'invalid_cursor',
      'starting_after',
    );
  });
});
