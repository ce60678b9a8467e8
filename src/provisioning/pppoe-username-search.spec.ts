import { pppoeUsernameSearch } from './services.repository';

describe('pppoeUsernameSearch', () => {
  const pattern = `'%' || lower($2::text) || '%'`;
  const placeholders = { tenant: '$1::text', pattern: () => pattern, exact: 'lower($3::text)' };

  it('should look in the usernames for a text a username can contain', () => {
    for (const text of ['cpe-42', 'Jane.Doe@isp', 'a_b', '4711']) {
      expect(pppoeUsernameSearch(placeholders, text)).toContain(`lower(v.pppoe_username) LIKE ${pattern}`);
    }
  });

  it('should leave the usernames out for a text no username can contain', () => {
    for (const text of ['Subscriber 4711', 'Müller', '50%', "o'brien", 'a/b', ' cpe-42']) {
      expect(pppoeUsernameSearch(placeholders, text)).toBeNull();
    }
  });
});
