import { ApiError } from '../../common/errors/api-error';
import { assertPublicMailHost, isMailHost } from './tenant-mail-settings';

describe('tenant mail settings', () => {
  describe('assertPublicMailHost', () => {
    it.each(['127.0.0.1', '10.1.2.3', '192.168.0.25', '169.254.169.254', '::1', 'fe80::1', 'localhost'])(
      'should refuse %s, naming mail.host, unless MAIL_ALLOW_PRIVATE',
      async (host) => {
        const refused = await assertPublicMailHost(host, false).catch((error: unknown) => error);
        expect(refused).toBeInstanceOf(ApiError);
        expect(refused).toMatchObject({ code: 'validation_failed', field: 'mail.host' });
        await expect(assertPublicMailHost(host, true)).resolves.toBeUndefined();
      },
    );

    it('should accept a public address, and a host left out', async () => {
      await expect(assertPublicMailHost('93.184.215.14', false)).resolves.toBeUndefined();
      await expect(assertPublicMailHost('2606:4700:4700::1111', false)).resolves.toBeUndefined();
      await expect(assertPublicMailHost(undefined, false)).resolves.toBeUndefined();
      await expect(assertPublicMailHost(null, false)).resolves.toBeUndefined();
    });
  });

  describe('isMailHost', () => {
    it.each(['smtp.example.com', 'mail', 'xn--bcher-kva.example', '192.0.2.1', '2001:db8::1'])(
      'should accept %s',
      (host) => expect(isMailHost(host)).toBe(true),
    );

    it.each([
      '',
      'smtp.example.com\r\nRCPT TO:<x@y>',
      'smtp.example.com:25',
      '[2001:db8::1]',
      'bücher.example',
      '-smtp.example.com',
      'smtp..example.com',
      `${'a'.repeat(64)}.example`,
      'smtp.example.com.',
      42,
    ])('should refuse %p', (host) => expect(isMailHost(host)).toBe(false));
  });
});
