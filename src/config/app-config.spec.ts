import { ConfigError, loadConfig } from './app-config';

describe('loadConfig', () => {
  it('should give the documented defaults for an empty environment', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 3000,
      databaseUrl: null,
      redisUrl: null,
      bootstrapToken: null,
      logLevel: 'info',
      rateLimit: { max: 600, windowS: 60 },
      abuse: { authFailuresMax: 20, windowS: 300, blockS: 900 },
    });
    expect(config.webhooks.retryDelaysS).toEqual([5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400]);
  });

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['DATABASE_URL', 'mysql://x'],
    ['DATABASE_URL', 'not a url'],
    ['REDIS_URL', 'http://localhost'],
    ['API_BOOTSTRAP_TOKEN', 'too-short'],
    ['LOG_LEVEL', 'loud'],
    ['RATE_LIMIT_MAX', '0'],
    ['RATE_LIMIT_WINDOW_S', '-1'],
    ['ABUSE_AUTH_FAILURES_MAX', '1.5'],
    ['ABUSE_WINDOW_S', 'x'],
    ['ABUSE_BLOCK_S', '0'],
    ['TRUST_PROXY', 'maybe'],
    ['WEBHOOK_RETRY_DELAYS_S', '5,,10'],
    ['DATABASE_POOL_MAX', '0'],
    ['EMBEDDED_DATABASE', 'maybe'],
    ['RATE_LIMIT_MAX', '10000001'],
    ['HOST', 'not a host'],
    ['HOST', 'http://0.0.0.0'],
    ['CORS_ORIGINS', 'https://portal.example.com/app'],
    ['CORS_ORIGINS', 'https://portal.example.com/'],
    ['CORS_ORIGINS', 'portal.example.com'],
    ['CORS_ORIGINS', '*'],
    ['CORS_ORIGINS', 'ftp://portal.example.com'],
    ['CORS_ORIGINS', 'https://portal.example.com,,https://a.example'],
    ['CORS_ORIGINS', 'https://portal.example.com?x=1'],
  ])('should stop on %s=%s with a message naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(name);
  });

  it('should read the values it is given', () => {
    const config = loadConfig({
      PORT: '8080',
      DATABASE_URL: 'postgres://u@db:5432/isp',
      REDIS_URL: 'redis://cache:6379',
      API_BOOTSTRAP_TOKEN: 'x'.repeat(32),
      RATE_LIMIT_MAX: '10',
      WEBHOOK_RETRY_DELAYS_S: '0.5,2',
      TRUST_PROXY: '1',
    });
    expect(config).toMatchObject({
      port: 8080,
      databaseUrl: 'postgres://u@db:5432/isp',
      redisUrl: 'redis://cache:6379',
      bootstrapToken: 'x'.repeat(32),
      rateLimit: { max: 10, windowS: 60 },
      trustProxy: 1,
    });
    expect(config.webhooks.retryDelaysS).toEqual([0.5, 2]);
  });

  describe('TRUST_PROXY', () => {
    it.each([[undefined], [''], ['false'], ['0']])('should trust no proxy for %p', (value) => {
      expect(loadConfig({ TRUST_PROXY: value }).trustProxy).toBe(false);
    });

    it.each([
      ['1', 1],
      ['2', 2],
    ])('should read %s as a count of trusted hops', (value, hops) => {
      expect(loadConfig({ TRUST_PROXY: value }).trustProxy).toBe(hops);
    });

    it('should read a comma-separated list of addresses, subnets and named ranges', () => {
      const config = loadConfig({
        TRUST_PROXY: '10.0.0.0/8, 192.168.1.7,fd00::/8 ,2001:db8::1, loopback,linklocal,uniquelocal',
      });
      expect(config.trustProxy).toEqual([
        '10.0.0.0/8',
        '192.168.1.7',
        'fd00::/8',
        '2001:db8::1',
        'loopback',
        'linklocal',
        'uniquelocal',
      ]);
    });

    it('should refuse true, saying a client could spoof its address and what to write instead', () => {
      for (const value of ['true', 'TRUE', 'yes']) {
        expect(() => loadConfig({ TRUST_PROXY: value })).toThrow(ConfigError);
        expect(() => loadConfig({ TRUST_PROXY: value })).toThrow(/spoof/);
        expect(() => loadConfig({ TRUST_PROXY: value })).toThrow(/hop count/);
      }
    });

    it.each([
      ['maybe'],
      ['1.5'],
      ['-1'],
      ['10.0.0.300'],
      ['10.0.0.0/33'],
      ['10.0.0.0/8/8'],
      ['10.0.0.0/'],
      ['fd00::/129'],
      ['10.0.0.0/8,'],
      ['10.0.0.0/8,,10.1.0.0/16'],
      ['10.0.0.1 10.0.0.2'],
      ['localhost'],
      ['1,10.0.0.0/8'],
    ])('should refuse %p at boot, naming the variable and the bad entry', (value) => {
      expect(() => loadConfig({ TRUST_PROXY: value })).toThrow(ConfigError);
      expect(() => loadConfig({ TRUST_PROXY: value })).toThrow('TRUST_PROXY');
    });
  });

  it('should refuse to start without DATABASE_URL when EMBEDDED_DATABASE is false, saying what to set', () => {
    const refuse = () => loadConfig({ EMBEDDED_DATABASE: 'false' });
    expect(refuse).toThrow(ConfigError);
    expect(refuse).toThrow(/DATABASE_URL is required.*EMBEDDED_DATABASE=true/);
  });

  it('should run the embedded database without DATABASE_URL unless told not to', () => {
    expect(loadConfig({}).databaseUrl).toBeNull();
    expect(loadConfig({ EMBEDDED_DATABASE: 'true' }).databaseUrl).toBeNull();
    const withServer = loadConfig({ EMBEDDED_DATABASE: 'false', DATABASE_URL: 'postgres://u@db:5432/isp' });
    expect(withServer.databaseUrl).toBe('postgres://u@db:5432/isp');
  });

  it('should bind every IPv4 interface by default, and the address HOST names', () => {
    expect(loadConfig({}).host).toBe('0.0.0.0');
    expect(loadConfig({ HOST: '127.0.0.1' }).host).toBe('127.0.0.1');
    expect(loadConfig({ HOST: '::' }).host).toBe('::');
    expect(loadConfig({ HOST: 'localhost' }).host).toBe('localhost');
  });

  it('should allow no cross-origin caller by default, and read CORS_ORIGINS as origins as browsers send them', () => {
    expect(loadConfig({}).corsOrigins).toEqual([]);
    expect(
      loadConfig({
        CORS_ORIGINS: ' https://portal.example.com, http://localhost:5173,HTTPS://Admin.Example.com:443',
      }).corsOrigins,
    ).toEqual(['https://portal.example.com', 'http://localhost:5173', 'https://admin.example.com']);
  });

  it('should name the bad entry of CORS_ORIGINS', () => {
    expect(() => loadConfig({ CORS_ORIGINS: 'https://ok.example,https://bad.example/path' })).toThrow(
      'got "https://bad.example/path"',
    );
  });

  describe('SMTP_URL and MAIL_FROM', () => {
    const FROM = 'Example ISP <billing@isp.example>';

    it('should have no mail server when neither is set', () => {
      expect(loadConfig({}).mail).toBeNull();
      expect(loadConfig({ SMTP_URL: ' ', MAIL_FROM: '' }).mail).toBeNull();
    });

    it('should read the server, its login and the sender', () => {
      expect(
        loadConfig({ SMTP_URL: 'smtp://apikey:s3cret@smtp.example.net:587', MAIL_FROM: FROM }).mail,
      ).toEqual({
        host: 'smtp.example.net',
        port: 587,
        tls: 'starttls',
        user: 'apikey',
        password: 's3cret',
        from: FROM,
      });
      expect(loadConfig({ SMTP_URL: 'smtps://mail.isp.example', MAIL_FROM: 'ops@isp.example' }).mail).toEqual(
        {
          host: 'mail.isp.example',
          port: 465,
          tls: 'tls',
          from: 'ops@isp.example',
        },
      );
    });

    it.each([
      ['SMTP_URL', { SMTP_URL: 'https://apikey:s3cret@smtp.example.net', MAIL_FROM: FROM }],
      ['SMTP_URL', { SMTP_URL: 'smtp://apikey:s3cret@smtp.example.net:99999', MAIL_FROM: FROM }],
      ['SMTP_URL', { SMTP_URL: 'smtp://apikey:s3cret@smtp.example.net?tls=maybe', MAIL_FROM: FROM }],
      ['SMTP_URL', { SMTP_URL: 'smtp://apikey:s3cret@smtp.example.net/path', MAIL_FROM: FROM }],
      ['SMTP_URL', { MAIL_FROM: FROM }],
      ['MAIL_FROM', { SMTP_URL: 'smtp://apikey:s3cret@smtp.example.net' }],
      ['MAIL_FROM', { SMTP_URL: 'smtp://apikey:s3cret@smtp.example.net', MAIL_FROM: 'billing at isp' }],
      [
        'MAIL_FROM',
        { SMTP_URL: 'smtp://apikey:s3cret@smtp.example.net', MAIL_FROM: 'a@isp.example\nBcc: x@y.z' },
      ],
    ])('should stop the boot naming %s, never repeating the password (%j)', (name, env) => {
      let error: unknown;
      try {
        loadConfig(env);
      } catch (thrown) {
        error = thrown;
      }
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).variable).toBe(name);
      expect((error as ConfigError).message).toMatch(new RegExp(`^Invalid configuration: ${name} `));
      expect((error as ConfigError).message).not.toContain('s3cret');
    });
  });
});
