import {
  hashSignInCode,
  inviteLink,
  newSignInCode,
  normalizePortalEmail,
  signInCodeMatches,
} from './portal-secrets';

describe('portal secrets', () => {
  it('makes six-digit sign-in codes, leading zeros kept, spread over the whole range', () => {
    const codes = Array.from({ length: 2000 }, () => newSignInCode());
    for (const code of codes) {
      expect(code).toMatch(/^\d{6}$/);
    }
    expect(new Set(codes).size).toBeGreaterThan(1990);
    expect(new Set(codes.map((code) => code[0])).size).toBe(10);
  });

  it('salts a code hash with its row id, and matches only that code of that row', () => {
    const hash = hashSignInCode('psc_a', '004217');
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(hash).not.toBe(hashSignInCode('psc_b', '004217'));
    expect(signInCodeMatches('psc_a', '004217', hash)).toBe(true);
    expect(signInCodeMatches('psc_a', '004218', hash)).toBe(false);
    expect(signInCodeMatches('psc_b', '004217', hash)).toBe(false);
    expect(signInCodeMatches('psc_a', '4217', hashSignInCode('psc_a', '4217'))).toBe(false);
    expect(signInCodeMatches('psc_a', '004217', null)).toBe(false);
    expect(signInCodeMatches('psc_a', '004217', 'abc')).toBe(false);
  });

  it('normalises an email as subscribers compare it', () => {
    expect(normalizePortalEmail('  Ada@Example.COM ')).toBe('ada@example.com');
  });

  it('appends the invite to PORTAL_URL, with & when it has a query, and gives none without it', () => {
    expect(inviteLink('https://p.example/', 'ipi_a+b')).toBe('https://p.example/?invite=ipi_a%2Bb');
    expect(inviteLink('https://p.example/?x=1', 'ipi_a')).toBe('https://p.example/?x=1&invite=ipi_a');
    expect(inviteLink(null, 'ipi_a')).toBeNull();
  });
});
