import { ConfigError, loadConfig } from './app-config';

describe('PUBLIC_BASE_URL', () => {
  it('should default to none (the served document names the origin each request came in on) and drop a trailing slash', () => {
    expect(loadConfig({}).publicBaseUrl).toBeNull();
    expect(loadConfig({ PUBLIC_BASE_URL: 'https://api.isp.example/v/' }).publicBaseUrl).toBe(
      'https://api.isp.example/v',
    );
  });

  it.each([
    'ftp://api.isp.example',
    'not a url',
    'https://api.isp.example/?x=1',
    'https://u:p@api.isp.example',
  ])('should stop on %s with a message naming the variable', (value) => {
    expect(() => loadConfig({ PUBLIC_BASE_URL: value })).toThrow(ConfigError);
    expect(() => loadConfig({ PUBLIC_BASE_URL: value })).toThrow('PUBLIC_BASE_URL');
  });
});
