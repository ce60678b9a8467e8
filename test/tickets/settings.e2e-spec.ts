import request from 'supertest';
import { expectError, expectList, expectSuccess, successData } from '../support/envelope';
import { bearer } from '../support/factories';
import { ISO_MS, listEvents } from '../support/subscriber-factory';
import {
  createTenantWithToken,
  type TenantWithToken,
  type TestApp,
  issueToken,
  appSuite,
} from '../support/test-app';
import { createTicket, TICKET_SCOPES, type Ticket } from '../support/ticket-factory';

const HOUR = 3_600_000;
const DEFAULT_HOURS = { urgent: 4, high: 24, normal: 72, low: 168 };

type Body = Record<string, unknown>;

interface Settings {
  due_hours: Record<'urgent' | 'high' | 'normal' | 'low', number>;
  updated_at: string | null;
}

function hoursBetween(from: string, to: string): number {
  return (Date.parse(to) - Date.parse(from)) / HOUR;
}

/** GET/PATCH /ticket-settings: the SLA hours per priority, per tenant, applied forward and on re-prioritising. */
describe('Tickets: SLA settings', () => {
  let t: TestApp;

  const getSettings = (token: string) => request(t.http).get('/api/v1/ticket-settings').set(bearer(token));
  const patchSettings = (token: string, body: Body) =>
    request(t.http).patch('/api/v1/ticket-settings').set(bearer(token)).send(body);
  const patchTicket = (token: string, id: string, body: Body) =>
    request(t.http).patch(`/api/v1/tickets/${id}`).set(bearer(token)).send(body);

  const readSettings = async (token: string) => successData<Settings>(await getSettings(token));
  const changeSettings = async (token: string, dueHours: Body) =>
    successData<Settings>(await patchSettings(token, { due_hours: dueHours }));
  const readTicket = async (token: string, id: string) =>
    successData<Ticket>(await request(t.http).get(`/api/v1/tickets/${id}`).set(bearer(token)));

  const tenant = () => createTenantWithToken(t, TICKET_SCOPES);

  appSuite((app) => (t = app));

  describe('GET /api/v1/ticket-settings', () => {
    it('should answer the defaults, updated_at null, for a tenant that never changed them', async () => {
      const fresh = await tenant();
      const first = await readSettings(fresh.token);
      expect(first).toEqual({ due_hours: DEFAULT_HOURS, updated_at: null });
      // Reading writes nothing: still the defaults and no event.
      expect(await readSettings(fresh.token)).toEqual(first);
      expect(await listEvents(t, fresh.token, { type: 'ticket_settings.updated' })).toEqual([]);
    });
  });

  describe('PATCH /api/v1/ticket-settings', () => {
    it('should merge one priority, keep the others, stamp updated_at and answer what GET answers', async () => {
      const fresh = await tenant();
      const before = Date.now();
      const res = await patchSettings(fresh.token, { due_hours: { high: 12 } });
      expectSuccess(res);
      const settings = res.body.data as Settings;
      expect(settings).toEqual({
        due_hours: { ...DEFAULT_HOURS, high: 12 },
        updated_at: expect.stringMatching(ISO_MS),
      });
      expect(Math.abs(Date.parse(settings.updated_at ?? '') - before)).toBeLessThan(60_000);
      expect(await readSettings(fresh.token)).toEqual(settings);

      const next = await changeSettings(fresh.token, { low: 200, urgent: 2 });
      expect(next.due_hours).toEqual({ urgent: 2, high: 12, normal: 72, low: 200 });
      expect(Date.parse(next.updated_at ?? '')).toBeGreaterThanOrEqual(Date.parse(settings.updated_at ?? ''));
      expect(await readSettings(fresh.token)).toEqual(next);
    });

    it('should accept the bounds 1 and 8760', async () => {
      const fresh = await tenant();
      const settings = await changeSettings(fresh.token, { urgent: 1, low: 8760 });
      expect(settings.due_hours).toEqual({ ...DEFAULT_HOURS, urgent: 1, low: 8760 });
    });

    it('should set a priority back to its default value when asked', async () => {
      const fresh = await tenant();
      await changeSettings(fresh.token, { normal: 10 });
      expect((await changeSettings(fresh.token, { normal: 72 })).due_hours).toEqual(DEFAULT_HOURS);
      expect((await readSettings(fresh.token)).due_hours).toEqual(DEFAULT_HOURS);
    });

    it.each<[string, Body, number, string, string]>([
      ['0 hours', { due_hours: { high: 0 } }, 422, 'validation_failed', 'due_hours.high'],
      ['a negative value', { due_hours: { urgent: -4 } }, 422, 'validation_failed', 'due_hours.urgent'],
      ['8761 hours', { due_hours: { low: 8761 } }, 422, 'validation_failed', 'due_hours.low'],
      ['1.5 hours', { due_hours: { normal: 1.5 } }, 422, 'validation_failed', 'due_hours.normal'],
      ['a string "12"', { due_hours: { high: '12' } }, 422, 'validation_failed', 'due_hours.high'],
      ['a boolean', { due_hours: { normal: true } }, 422, 'validation_failed', 'due_hours.normal'],
      ['null', { due_hours: { urgent: null } }, 422, 'validation_failed', 'due_hours.urgent'],
      ['an unknown priority', { due_hours: { critical: 1 } }, 400, 'unknown_field', 'due_hours.critical'],
      ['due_hours as a number', { due_hours: 12 }, 422, 'validation_failed', 'due_hours'],
      ['due_hours as a string', { due_hours: 'high' }, 422, 'validation_failed', 'due_hours'],
      ['due_hours as an array', { due_hours: [12] }, 422, 'validation_failed', 'due_hours'],
      ['an unknown top-level field', { sla: { high: 12 } }, 400, 'unknown_field', 'sla'],
      [
        'an unknown field beside due_hours',
        { due_hours: { high: 12 }, timezone: 'UTC' },
        400,
        'unknown_field',
        'timezone',
      ],
    ])('should refuse %s, naming the field, and change nothing', async (_case, body, status, code, field) => {
      const fresh = await tenant();
      expectError(await patchSettings(fresh.token, body), status, code, field);
      expect(await readSettings(fresh.token)).toEqual({ due_hours: DEFAULT_HOURS, updated_at: null });
      expect(await listEvents(t, fresh.token, { type: 'ticket_settings.updated' })).toEqual([]);
    });

    it('should refuse a whole PATCH when one priority is wrong, keeping the valid ones out too', async () => {
      const fresh = await tenant();
      await changeSettings(fresh.token, { high: 12 });
      const before = await readSettings(fresh.token);
      expectError(
        await patchSettings(fresh.token, { due_hours: { low: 100, urgent: 0 } }),
        422,
        'validation_failed',
        'due_hours.urgent',
      );
      expect(await readSettings(fresh.token)).toEqual(before);
    });
  });

  describe('the SLA of tickets', () => {
    it('should apply new hours to tickets created afterwards, and leave existing tickets their due_at', async () => {
      const desk = await tenant();
      const olderHigh = await createTicket(t, desk.token, { priority: 'high' });
      const olderNormal = await createTicket(t, desk.token, { priority: 'normal' });
      expect(hoursBetween(olderHigh.created_at, olderHigh.due_at)).toBe(24);

      await changeSettings(desk.token, { high: 12, normal: 100 });

      const newerHigh = await createTicket(t, desk.token, { priority: 'high' });
      const newerNormal = await createTicket(t, desk.token, { priority: 'normal' });
      const newerLow = await createTicket(t, desk.token, { priority: 'low' });
      expect(hoursBetween(newerHigh.created_at, newerHigh.due_at)).toBe(12);
      expect(hoursBetween(newerNormal.created_at, newerNormal.due_at)).toBe(100);
      expect(hoursBetween(newerLow.created_at, newerLow.due_at)).toBe(168);

      expect((await readTicket(desk.token, olderHigh.id)).due_at).toBe(olderHigh.due_at);
      expect((await readTicket(desk.token, olderNormal.id)).due_at).toBe(olderNormal.due_at);
      const list = await request(t.http).get('/api/v1/tickets?limit=100').set(bearer(desk.token));
      expectList(list);
      const listed = new Map((list.body.data as Ticket[]).map((ticket) => [ticket.id, ticket.due_at]));
      expect(listed.get(olderHigh.id)).toBe(olderHigh.due_at);
      expect(listed.get(olderNormal.id)).toBe(olderNormal.due_at);
      expect(listed.get(newerHigh.id)).toBe(newerHigh.due_at);
    });

    it("should keep an existing ticket's due_at through edits that leave its priority alone", async () => {
      const desk = await tenant();
      const ticket = await createTicket(t, desk.token, { priority: 'high' });
      await changeSettings(desk.token, { high: 6 });
      for (const body of [{ subject: 'Renamed' }, { tags: ['sla'] }, { priority: 'high' }]) {
        const res = await patchTicket(desk.token, ticket.id, body);
        expectSuccess(res);
        expect(res.body.data.due_at).toBe(ticket.due_at);
      }
    });

    it("should recompute a re-prioritised ticket's due_at from its created_at with the current settings", async () => {
      const desk = await tenant();
      const ticket = await createTicket(t, desk.token, { priority: 'normal' });
      expect(hoursBetween(ticket.created_at, ticket.due_at)).toBe(72);
      await changeSettings(desk.token, { high: 12, low: 300 });

      const high = await patchTicket(desk.token, ticket.id, { priority: 'high' });
      expectSuccess(high);
      expect(hoursBetween(ticket.created_at, high.body.data.due_at)).toBe(12);

      await changeSettings(desk.token, { normal: 48 });
      const normal = await patchTicket(desk.token, ticket.id, { priority: 'normal' });
      expectSuccess(normal);
      expect(hoursBetween(ticket.created_at, normal.body.data.due_at)).toBe(48);

      const low = await patchTicket(desk.token, ticket.id, { priority: 'low' });
      expect(hoursBetween(ticket.created_at, low.body.data.due_at)).toBe(300);
      expect((await readTicket(desk.token, ticket.id)).due_at).toBe(low.body.data.due_at);
    });
  });

  describe('tenant isolation', () => {
    it("should keep each tenant's settings its own, for reads and for the tickets it opens", async () => {
      const [a, b] = await Promise.all([tenant(), tenant()]);
      await changeSettings(a.token, { high: 2, urgent: 1 });
      await changeSettings(b.token, { high: 30 });

      expect((await readSettings(a.token)).due_hours).toEqual({ ...DEFAULT_HOURS, high: 2, urgent: 1 });
      expect((await readSettings(b.token)).due_hours).toEqual({ ...DEFAULT_HOURS, high: 30 });
      const untouched = await tenant();
      expect(await readSettings(untouched.token)).toEqual({ due_hours: DEFAULT_HOURS, updated_at: null });

      const inA = await createTicket(t, a.token, { priority: 'high' });
      const inB = await createTicket(t, b.token, { priority: 'urgent' });
      const inUntouched = await createTicket(t, untouched.token, { priority: 'high' });
      expect(hoursBetween(inA.created_at, inA.due_at)).toBe(2);
      expect(hoursBetween(inB.created_at, inB.due_at)).toBe(4);
      expect(hoursBetween(inUntouched.created_at, inUntouched.due_at)).toBe(24);

      expect(await listEvents(t, untouched.token, { type: 'ticket_settings.updated' })).toEqual([]);
      const ofB = await listEvents(t, b.token, { type: 'ticket_settings.updated' });
      expect(ofB).toHaveLength(1);
      expect(ofB[0].data.object).toEqual(await readSettings(b.token));
    });
  });

  describe('ticket_settings.updated', () => {
    it('should record each change with the settings as data.object, the token as actor, and no subject', async () => {
      const desk: TenantWithToken = await tenant();
      const first = await changeSettings(desk.token, { high: 12 });
      const second = await changeSettings(desk.token, { low: 100, urgent: 3 });
      const events = await listEvents(t, desk.token, { type: 'ticket_settings.updated' });
      expect(events.map((event) => event.data.object)).toEqual([second, first]);
      expect(events.map((event) => event.subject_id)).toEqual([null, null]);
      for (const event of events) {
        expect(event.actor).toEqual({ type: 'token', id: desk.tokenId });
        expect(event.created_at).toMatch(ISO_MS);
      }
      expect([...(events[0].data.changed_fields as string[])].sort()).toEqual([
        'due_hours.low',
        'due_hours.urgent',
      ]);
      expect(events[1].data.changed_fields).toEqual(['due_hours.high']);
    });
  });

  describe('scopes', () => {
    let desk: TenantWithToken;

    beforeAll(async () => {
      desk = await tenant();
    });

    it('should answer 403 insufficient_scope to GET without a tickets scope', async () => {
      const none = await issueToken(t, desk.slug, ['subscribers:read', 'subscribers:write', 'events:read']);
      expectError(await getSettings(none.token), 403, 'insufficient_scope');
      expectError(await patchSettings(none.token, { due_hours: { high: 5 } }), 403, 'insufficient_scope');
    });

    it('should answer GET but refuse PATCH with only tickets:read, changing nothing', async () => {
      const reader = await issueToken(t, desk.slug, ['tickets:read']);
      expect(await readSettings(reader.token)).toEqual({ due_hours: DEFAULT_HOURS, updated_at: null });
      expectError(await patchSettings(reader.token, { due_hours: { high: 5 } }), 403, 'insufficient_scope');
      expect(await readSettings(desk.token)).toEqual({ due_hours: DEFAULT_HOURS, updated_at: null });
    });

    it.each(['tickets:*', 'admin'])('should allow GET and PATCH to a token with %s', async (scope) => {
      const token = (await issueToken(t, desk.slug, [scope])).token;
      const hours = scope === 'admin' ? 7 : 9;
      expect((await changeSettings(token, { high: hours })).due_hours.high).toBe(hours);
      expect((await readSettings(token)).due_hours.high).toBe(hours);
    });
  });
});
