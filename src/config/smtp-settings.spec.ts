import { ConfigError } from './app-config';
import { describeSmtp, parseSmtpEnv, parseSmtpUrl } from './smtp-settings';

const FROM = 'Example ISP <billing@isp.example.com>';

describe('parseSmtpEnv', () => {
  it('should read nothing when neither variable is set', () => {
    expect(parseSmtpEnv({})).toEqual({ settings: null });
    expect(parseSmtpEnv({ SMTP_URL: '  ', MAIL_FROM: '' })).toEqual({ settings: null });
  });

  it.each([
    [
      'smtp://user:pass@mail.example.com:587',
      { host: 'mail.example.com', port: 587, tls: 'starttls', user: 'user', password: 'pass' },
    ],
    ['smtps://mail.example.com:465', { host: 'mail.example.com', port: 465, tls: 'tls' }],
    ['smtps://Mail.Example.com', { host: 'mail.example.com', port: 465, tls: 'tls' }],
    ['smtp://mail.example.com', { host: 'mail.example.com', port: 587, tls: 'starttls' }],
    ['smtp://relay.internal:25?tls=none', { host: 'relay.internal', port: 25, tls: 'none' }],
    ['smtp://relay.internal:25?tls=starttls', { host: 'relay.internal', port: 25, tls: 'starttls' }],
    ['smtps://h.example.com?tls=tls', { host: 'h.example.com', port: 465, tls: 'tls' }],
    ['smtp://10.0.0.5:2525/', { host: '10.0.0.5', port: 2525, tls: 'starttls' }],
    ['smtp://[::1]:25?tls=none', { host: '::1', port: 25, tls: 'none' }],
    [
      'smtp://billing%40isp.example.com:p%40ss%3Aw%2Ford@mail.example.com',
      {
        host: 'mail.example.com',
        port: 587,
        tls: 'starttls',
        user: 'billing@isp.example.com',
        password: 'p@ss:w/ord',
      },
    ],
  ])('should read %s', (url, server) => {
    expect(parseSmtpEnv({ SMTP_URL: url, MAIL_FROM: FROM })).toEqual({ settings: { ...server, from: FROM } });
  });

  it.each([
    ['not a url', 'is not a valid URL'],
    ['http://mail.example.com', 'must use smtp: or smtps:, got "http:"'],
    ['smtp://mail.example.com/inbox', 'must not have a path or a fragment'],
    ['smtp://mail.example.com#x', 'must not have a path or a fragment'],
    ['smtp://mail_example.com', 'must name a host'],
    ['smtp://exämple.com', 'must name a host'],
    ['smtp://mail.example.com:0', 'must name a port between 1 and 65535'],
    ['smtp://mail.example.com:70000', 'is not a valid URL'],
    ['smtp://mail.example.com?tls=tls', 'must have tls=starttls or tls=none on smtp://'],
    ['smtp://mail.example.com?tls=yes', 'must have tls=starttls or tls=none on smtp://'],
    ['smtps://mail.example.com?tls=none', 'is smtps://, TLS from the first byte, so tls=none does not apply'],
    ['smtp://mail.example.com?tls=none&tls=starttls', 'must give tls at most once'],
    ['smtp://mail.example.com?secure=true', 'has an unknown parameter "secure"'],
    ['smtp://user@mail.example.com', 'must give both a user and a password, or neither'],
    ['smtp://:s3cret-pass@mail.example.com', 'must give both a user and a password, or neither'],
    ['smtp://user:s3cret%ZZpass@mail.example.com', 'has a malformed percent-encoding'],
    ['smtp://user:s3cret%0Apass@mail.example.com', 'must not have a line break or a NUL character'],
  ])('should refuse SMTP_URL=%s, naming the variable and never the password', (url, problem) => {
    const result = parseSmtpEnv({ SMTP_URL: url, MAIL_FROM: FROM });

    expect(result).toEqual({ variable: 'SMTP_URL', problem: expect.stringContaining(problem) });
    expect(JSON.stringify(result)).not.toMatch(/s3cret/);
  });

  it('should give app-config what it needs for its ConfigError', () => {
    const result = parseSmtpEnv({ SMTP_URL: 'smtp://user:s3cret@mail.example.com:99999', MAIL_FROM: FROM });
    if (!('variable' in result)) {
      throw new Error('expected a problem');
    }
    const error = new ConfigError(result.variable, result.problem);

    expect(error.message).toMatch(/^Invalid configuration: SMTP_URL is not a valid URL\. Write smtp:\/\//);
    expect(error.message).not.toContain('s3cret');
  });

  it('should require both variables or neither', () => {
    expect(parseSmtpEnv({ SMTP_URL: 'smtp://mail.example.com' })).toEqual({
      variable: 'MAIL_FROM',
      problem: expect.stringContaining('is required when SMTP_URL is set'),
    });
    expect(parseSmtpEnv({ MAIL_FROM: FROM })).toEqual({
      variable: 'SMTP_URL',
      problem: expect.stringContaining('is required when MAIL_FROM is set'),
    });
  });

  it.each([
    ['billing@isp.example.com'],
    ['Example ISP <billing@isp.example.com>'],
    ['"Example ISP, Billing" <billing@isp.example.com>'],
    ['<billing@isp.example.com>'],
  ])('should accept MAIL_FROM=%s', (from) => {
    expect(parseSmtpEnv({ SMTP_URL: 'smtp://mail.example.com', MAIL_FROM: from })).toMatchObject({
      settings: { from },
    });
  });

  it.each([
    ['billing', 'is not a single mailbox address'],
    ['billing@isp.example.com, other@isp.example.com', 'is not a single mailbox address'],
    ['Example ISP <billing@isp.example.com', 'is not a single mailbox address'],
    ['Example <a@b.example.com> <c@d.example.com>', 'is not a single mailbox address'],
    ['billing@isp.example.com\nBcc: x@evil.example', 'contains a line break'],
  ])('should refuse MAIL_FROM=%j', (from, reason) => {
    expect(parseSmtpEnv({ SMTP_URL: 'smtp://mail.example.com', MAIL_FROM: from })).toEqual({
      variable: 'MAIL_FROM',
      problem: expect.stringContaining(reason),
    });
  });
});

describe('parseSmtpUrl', () => {
  it('should answer the server alone, for settings that take their sender elsewhere', () => {
    expect(parseSmtpUrl('smtps://u:p@smtp.example.com')).toEqual({
      host: 'smtp.example.com',
      port: 465,
      tls: 'tls',
      user: 'u',
      password: 'p',
    });
  });
});

describe('describeSmtp', () => {
  it('should name the server, the TLS mode and the user, never the password', () => {
    const settings = {
      host: 'host',
      port: 587,
      tls: 'starttls' as const,
      user: 'u',
      password: 's3cret',
      from: FROM,
    };

    expect(describeSmtp(settings)).toBe('smtp://host:587 (starttls, user u)');
    expect(describeSmtp({ host: 'mail.example.com', port: 465, tls: 'tls' })).toBe(
      'smtps://mail.example.com:465 (tls, no login)',
    );
    expect(describeSmtp({ host: '::1', port: 25, tls: 'none' })).toBe('smtp://[::1]:25 (no TLS, no login)');
  });
});
