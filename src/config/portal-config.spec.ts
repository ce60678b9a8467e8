import { loadConfig } from './app-config';

describe('PORTAL_URL', () => {
  it("should default to this server's own portal under PUBLIC_BASE_URL, so an invite link opens /portal/", () => {
    expect(loadConfig({ PUBLIC_BASE_URL: 'https://isp.example/api-prefix/' }).portal.url).toBe(
      'https://isp.example/api-prefix/portal/',
    );
  });

  it('should be the page PORTAL_URL names when set, and none when neither is set', () => {
    const both = {
      PUBLIC_BASE_URL: 'https://api.isp.example',
      PORTAL_URL: 'https://my.isp.example/?tenant=acme',
    };
    expect(loadConfig(both).portal.url).toBe('https://my.isp.example/?tenant=acme');
    expect(loadConfig({}).portal.url).toBeNull();
  });
});
