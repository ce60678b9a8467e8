import { randomBytes, randomInt } from 'node:crypto';
import { Client } from 'pg';
import { startFakeNas, type FakeNas } from './support/fake-nas';
import { freeRadiusBinary, startFreeRadius, type FreeRadius } from './support/freeradius';
import { accessRequest, accountingRequest, radiusRequest } from './support/radius-client';

/**
 * Self-test of the RADIUS fixture, straight against the FreeRADIUS tables (not through the API): a real FreeRADIUS
 * on DATABASE_URL authenticates and accounts for rows this test inserts, and the fake NAS takes RFC 5176 requests.
 * Every row it inserts carries a unique prefix and is deleted afterwards, so it can share the database with others.
 */

const DATABASE_URL = process.env.DATABASE_URL ?? '';
const prefix = `fixture_${randomBytes(4).toString('hex')}_`;
const user = `${prefix}alice`;
const suspendedUser = `${prefix}bob`;
const suspendedGroup = `${prefix}suspended`;
const password = 'correct horse';
const rate = '10M/20M';
const clientSecret = 'static-secret';
const nasSecret = 'nas-secret';
/**
 * Loopback addresses of their own, for the nas-table NAS and for a source no client matches, so that a `nas` row
 * another suite left (at 127.0.0.2, say) can neither shadow nor cover them.
 */
const nasAddress = `127.1.${randomInt(256)}.${randomInt(2, 255)}`;
const unknownAddress = `127.2.${randomInt(256)}.${randomInt(2, 255)}`;
/** What one Acct-*-Gigawords counts: 2^32 octets. */
const GIGAWORD = 2 ** 32;

describe('RADIUS fixture', () => {
  let db: Client;
  let server: FreeRadius;
  let auth: { address: string; port: number };
  let acct: { address: string; port: number };

  beforeAll(async () => {
    if (!DATABASE_URL || !freeRadiusBinary()) {
      throw new Error(
        'the RADIUS suite needs DATABASE_URL (with the FreeRADIUS tables) and freeradius installed',
      );
    }
    db = new Client({ connectionString: DATABASE_URL });
    await db.connect();
    await db.query(`INSERT INTO nas (nasname, shortname, type, secret) VALUES ($1, $2, 'other', $3)`, [
      nasAddress,
      `${prefix}nas`,
      nasSecret,
    ]);
    await db.query(
      `INSERT INTO radcheck (username, attribute, op, value) VALUES
         ($1, 'Cleartext-Password', ':=', $3), ($2, 'Cleartext-Password', ':=', $3)`,
      [user, suspendedUser, password],
    );
    await db.query(
      `INSERT INTO radreply (username, attribute, op, value) VALUES ($1, 'Mikrotik-Rate-Limit', '=', $2)`,
      [user, rate],
    );
    await db.query(`INSERT INTO radusergroup (username, groupname, priority) VALUES ($1, $2, 1)`, [
      suspendedUser,
      suspendedGroup,
    ]);
    await db.query(
      `INSERT INTO radgroupcheck (groupname, attribute, op, value) VALUES ($1, 'Auth-Type', ':=', 'Reject')`,
      [suspendedGroup],
    );
    await db.query(
      `INSERT INTO radgroupreply (groupname, attribute, op, value)
         VALUES ($1, 'Reply-Message', ':=', 'Service suspended')`,
      [suspendedGroup],
    );
    server = await startFreeRadius({ databaseUrl: DATABASE_URL, clientSecret });
    auth = { address: '127.0.0.1', port: server.authPort };
    acct = { address: '127.0.0.1', port: server.acctPort };
  });

  afterAll(async () => {
    await server?.stop();
    if (db) {
      for (const table of ['radacct', 'radcheck', 'radreply', 'radusergroup']) {
        await db.query(`DELETE FROM ${table} WHERE username LIKE $1`, [`${prefix}%`]);
      }
      await db.query(`DELETE FROM radgroupcheck WHERE groupname = $1`, [suspendedGroup]);
      await db.query(`DELETE FROM radgroupreply WHERE groupname = $1`, [suspendedGroup]);
      await db.query(`DELETE FROM nas WHERE shortname = $1`, [`${prefix}nas`]);
      await db.end();
    }
  });

  /** The server's output, appended to a failing expectation's message by rethrowing. */
  async function withLog<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      (error as Error).message += `\n--- FreeRADIUS output ---\n${server.log()}`;
      throw error;
    }
  }

  it('answers Status-Server on the auth and the accounting port', () =>
    withLog(async () => {
      const onAuth = await radiusRequest({
        server: auth,
        secret: clientSecret,
        code: 'Status-Server',
        attributes: [],
      });
      expect(onAuth.code).toBe('Access-Accept');
      const onAcct = await radiusRequest({
        server: acct,
        secret: clientSecret,
        code: 'Status-Server',
        attributes: [],
      });
      expect(onAcct.code).toBe('Accounting-Response');
    }));

  it('accepts the right password from the static client with the radreply attributes', () =>
    withLog(async () => {
      const reply = await accessRequest({ server: auth, secret: clientSecret, userName: user, password });
      expect(reply).toEqual({ code: 'Access-Accept', attributes: { 'Mikrotik-Rate-Limit': rate } });
    }));

  it('rejects a wrong password', () =>
    withLog(async () => {
      const reply = await accessRequest({
        server: auth,
        secret: clientSecret,
        userName: user,
        password: 'wrong',
      });
      expect(reply.code).toBe('Access-Reject');
    }));

  it('accepts a NAS from the nas table by its source address and secret, and ignores an unknown one', () =>
    withLog(async () => {
      const reply = await accessRequest({
        server: auth,
        secret: nasSecret,
        source: nasAddress,
        userName: user,
        password,
      });
      expect(reply.code).toBe('Access-Accept');
      await expect(
        accessRequest({
          server: auth,
          secret: nasSecret,
          source: unknownAddress,
          userName: user,
          password,
          timeoutMs: 300,
          tries: 1,
        }),
      ).rejects.toThrow(/no answer/);
    }));

  it('rejects a user of a group with Auth-Type := Reject, with the group Reply-Message', () =>
    withLog(async () => {
      const reply = await accessRequest({
        server: auth,
        secret: clientSecret,
        userName: suspendedUser,
        password,
      });
      expect(reply).toEqual({ code: 'Access-Reject', attributes: { 'Reply-Message': 'Service suspended' } });
    }));

  it('writes Start, Interim-Update and Stop from a nas-table NAS into one radacct row, gigawords included', () =>
    withLog(async () => {
      const session = { server: acct, secret: nasSecret, source: nasAddress };
      const attributes: [string, unknown][] = [
        ['User-Name', user],
        ['Acct-Session-Id', `${prefix}s1`],
        ['NAS-IP-Address', nasAddress],
        ['Framed-IP-Address', '100.64.0.7'],
      ];
      const row = async () => {
        const { rows } = await db.query(
          `SELECT acctsessionid, nasipaddress::text, framedipaddress::text, acctinputoctets::text,
                  acctoutputoctets::text, acctsessiontime::text, acctterminatecause, acctstarttime, acctstoptime
             FROM radacct WHERE username = $1`,
          [user],
        );
        expect(rows).toHaveLength(1);
        return rows[0] as Record<string, unknown>;
      };

      expect((await accountingRequest({ ...session, statusType: 'Start', attributes })).code).toBe(
        'Accounting-Response',
      );
      expect(await row()).toMatchObject({
        acctsessionid: `${prefix}s1`,
        nasipaddress: `${nasAddress}/32`,
        framedipaddress: '100.64.0.7/32',
        acctinputoctets: '0',
        acctstoptime: null,
      });

      await accountingRequest({
        ...session,
        statusType: 'Interim-Update',
        attributes: [...attributes, ['Acct-Session-Time', 60]],
        inputBytes: 1000,
        outputBytes: 2000,
      });
      expect(await row()).toMatchObject({
        acctinputoctets: '1000',
        acctoutputoctets: '2000',
        acctstoptime: null,
      });

      await accountingRequest({
        ...session,
        statusType: 'Stop',
        attributes: [...attributes, ['Acct-Session-Time', 120], ['Acct-Terminate-Cause', 'User-Request']],
        inputBytes: 5 * GIGAWORD + 123,
        outputBytes: GIGAWORD - 1,
      });
      const stopped = await row();
      expect(stopped).toMatchObject({
        acctinputoctets: String(5 * GIGAWORD + 123),
        acctoutputoctets: String(GIGAWORD - 1),
        acctsessiontime: '120',
        acctterminatecause: 'User-Request',
      });
      expect(stopped.acctstoptime).toBeInstanceOf(Date);
    }));

  describe('fake NAS', () => {
    let nas: FakeNas;
    const to = () => ({ address: nas.address, port: nas.port });
    const disconnect: [string, unknown][] = [
      ['User-Name', user],
      ['Acct-Session-Id', `${prefix}s1`],
    ];

    beforeAll(async () => {
      nas = await startFakeNas({ address: '127.0.0.1', secret: nasSecret });
    });
    afterAll(() => nas?.close());
    beforeEach(() => {
      nas.clear();
      nas.answer('ack');
    });

    it('ACKs a Disconnect-Request signed with its secret', async () => {
      const reply = await radiusRequest({
        server: to(),
        secret: nasSecret,
        code: 'Disconnect-Request',
        attributes: disconnect,
      });
      expect(reply.code).toBe('Disconnect-ACK');
      const [request] = await nas.waitFor(1);
      expect(request).toMatchObject({
        code: 'Disconnect-Request',
        authenticatorValid: true,
        attributes: { 'User-Name': user, 'Acct-Session-Id': `${prefix}s1` },
        from: { address: '127.0.0.1' },
      });
    });

    it('decodes vendor attributes of a CoA-Request by name', async () => {
      const reply = await radiusRequest({
        server: to(),
        secret: nasSecret,
        code: 'CoA-Request',
        attributes: [
          ['User-Name', user],
          ['Vendor-Specific', 'Mikrotik', [['Mikrotik-Rate-Limit', rate]]],
          ['Vendor-Specific', 'WISPr', [['WISPr-Bandwidth-Max-Up', 10_000_000]]],
        ],
      });
      expect(reply.code).toBe('CoA-ACK');
      const [request] = await nas.waitFor(1);
      expect(request.attributes).toEqual({
        'User-Name': user,
        'Mikrotik-Rate-Limit': rate,
        'WISPr-Bandwidth-Max-Up': 10_000_000,
      });
    });

    it("NAKs with Error-Cause Session-Context-Not-Found in 'nak' mode", async () => {
      nas.answer('nak');
      const reply = await radiusRequest({
        server: to(),
        secret: nasSecret,
        code: 'Disconnect-Request',
        attributes: disconnect,
      });
      expect(reply).toEqual({
        code: 'Disconnect-NAK',
        attributes: { 'Error-Cause': 'Session-Context-Not-Found' },
      });
    });

    it('records a wrongly signed request as invalid and does not answer it', async () => {
      await expect(
        radiusRequest({
          server: to(),
          secret: 'wrong',
          code: 'Disconnect-Request',
          attributes: disconnect,
          timeoutMs: 300,
          tries: 1,
        }),
      ).rejects.toThrow(/no answer/);
      const [request] = await nas.waitFor(1);
      expect(request).toMatchObject({ code: 'Disconnect-Request', authenticatorValid: false });
      expect(request.attributes['User-Name']).toBe(user);
    });

    it("answers nothing in 'silent' mode, so the sender retries and gives up", async () => {
      nas.answer('silent');
      await expect(
        radiusRequest({
          server: to(),
          secret: nasSecret,
          code: 'Disconnect-Request',
          attributes: disconnect,
          timeoutMs: 200,
        }),
      ).rejects.toThrow(/no answer .* after 3 tries/);
      const requests = await nas.waitFor(3);
      expect(requests.map((request) => request.authenticatorValid)).toEqual([true, true, true]);
      expect(new Set(requests.map((request) => request.raw.toString('hex'))).size).toBe(1);
    });
  });
});
