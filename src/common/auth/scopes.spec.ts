import { hasScope, scopesNotHeld } from './scopes';

describe('hasScope', () => {
  it('should let platform:admin imply admin and every data scope', () => {
    for (const scope of [
      'admin',
      'platform:admin',
      'subscribers:write',
      'billing:*',
      'events:read',
    ] as const) {
      expect(hasScope(['platform:admin'], scope)).toBe(true);
    }
  });

  it('should let admin imply every data scope but not platform:admin', () => {
    expect(hasScope(['admin'], 'webhooks:write')).toBe(true);
    expect(hasScope(['admin'], 'provisioning:*')).toBe(true);
    expect(hasScope(['admin'], 'platform:admin')).toBe(false);
  });

  it('should let <domain>:* imply read and write of its domain only', () => {
    expect(hasScope(['billing:*'], 'billing:write')).toBe(true);
    expect(hasScope(['billing:*'], 'subscribers:read')).toBe(false);
    expect(hasScope(['billing:read'], 'billing:*')).toBe(false);
    expect(hasScope(['billing:read'], 'admin')).toBe(false);
  });
});

describe('scopesNotHeld', () => {
  it('should name the scopes a token would grant beyond its own', () => {
    expect(scopesNotHeld(['admin'], ['subscribers:*', 'platform:admin'])).toEqual(['platform:admin']);
    expect(scopesNotHeld(['subscribers:read'], ['subscribers:write'])).toEqual(['subscribers:write']);
    expect(scopesNotHeld(['platform:admin'], ['platform:admin', 'admin'])).toEqual([]);
  });
});
