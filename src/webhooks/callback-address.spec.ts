import { isForbiddenAddress } from './callback-address';

describe('callback addresses', () => {
  it.each([
    '127.0.0.1',
    '10.1.2.3',
    '172.16.0.1',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '::1',
    '::',
    'fe80::1',
    'fd00::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::127.0.0.1',
    '2002:7f00:1::',
    'fec0::1',
    '64:ff9b:1::a',
    'not-an-ip',
  ])('should refuse %s', (address) => {
    expect(isForbiddenAddress(address)).toBe(true);
  });

  it.each(['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8'])(
    'should allow %s',
    (address) => {
      expect(isForbiddenAddress(address)).toBe(false);
    },
  );
});
