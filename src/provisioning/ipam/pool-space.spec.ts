import { formatAddress, mergeIntervals, parseAddress, parseNetwork, parseRange } from './ip-math';
import { PoolSpace } from './pool-space';

describe('ip-math', () => {
  it.each([
    ['2001:db8::1', '2001:db8::1'],
    ['2001:DB8:0:0:0:0:0:1', '2001:db8::1'],
    ['2001:db8:0:0:1:0:0:1', '2001:db8::1:0:0:1'],
    ['2001:db8:0:1:1:1:1:1', '2001:db8:0:1:1:1:1:1'],
    ['::', '::'],
    ['::1', '::1'],
    ['::ffff:192.0.2.1', '::ffff:c000:201'],
    ['fe80::', 'fe80::'],
  ])('should write %s as RFC 5952 does: %s', (text, canonical) => {
    const address = parseAddress(text)!;
    expect(formatAddress(address.family, address.value)).toBe(canonical);
  });

  it.each([
    '1.2.3',
    '1.2.3.256',
    '01.2.3.4',
    '1::2::3',
    '1:2:3:4:5:6:7:8:9',
    '12345::',
    'g::1',
    '',
    '1.2.3.4/24',
  ])('should refuse %p as an address', (text) => {
    expect(parseAddress(text)).toBeNull();
  });

  it('should read a network and say whether host bits were set', () => {
    expect(parseNetwork('198.51.100.0/24')).toMatchObject({ family: 4, length: 24, hostBits: false });
    expect(parseNetwork('198.51.100.7/24')).toMatchObject({ hostBits: true });
    expect(parseNetwork('2001:db8::/33')).toMatchObject({ family: 6, length: 33, hostBits: false });
    expect(parseNetwork('198.51.100.0/33')).toBeNull();
    expect(parseNetwork('198.51.100.0/024')).toBeNull();
  });

  it('should read an excluded range as an address, a first-last range or a network', () => {
    expect(parseRange('198.51.100.9')?.text).toBe('198.51.100.9');
    expect(parseRange('198.51.100.2-198.51.100.9')?.text).toBe('198.51.100.2-198.51.100.9');
    expect(parseRange('198.51.100.9-198.51.100.2')).toBeNull();
    expect(parseRange('2001:DB8::/64')?.text).toBe('2001:db8::/64');
    expect(parseRange('198.51.100.1-2001:db8::1')).toBeNull();
  });

  it('should merge overlapping and adjacent intervals', () => {
    expect(
      mergeIntervals([
        [5n, 6n],
        [0n, 1n],
        [2n, 3n],
        [6n, 9n],
      ]),
    ).toEqual([
      [0n, 3n],
      [5n, 9n],
    ]);
  });
});

describe('PoolSpace', () => {
  const v4 = (cidr: string, gateway: string | null = null, excluded: string[] = []) =>
    new PoolSpace({ cidr, gateway, excluded, delegatedPrefixLength: null });

  it('should leave out the network and broadcast addresses of an IPv4 pool of /30 or shorter', () => {
    expect(v4('198.51.100.0/28').size).toBe(14n);
    expect(v4('198.51.100.0/31').size).toBe(2n);
    expect(v4('198.51.100.7/32').size).toBe(1n);
  });

  it('should leave out the gateway and the excluded ranges, once each however they overlap', () => {
    const space = v4('198.51.100.0/24', '198.51.100.1', [
      '198.51.100.2-198.51.100.9',
      '198.51.100.5-198.51.100.12',
      '198.51.100.128/25',
    ]);
    // 256 less .0 (the network), .1 (the gateway), .2–.12 and .128–.255 (the broadcast address among them).
    expect(space.size).toBe(256n - 1n - 1n - 11n - 128n);
    expect(space.textOf(space.firstFree([])!)).toBe('198.51.100.13');
  });

  it('should hand out the lowest unit neither blocked nor taken, and null when full', () => {
    const space = v4('198.51.100.0/29');
    expect(space.firstFree([])).toBe(1n);
    expect(space.firstFree([1n, 2n, 4n])).toBe(3n);
    expect(space.firstFree([1n, 2n, 3n, 4n, 5n, 6n])).toBeNull();
  });

  it('should number an IPv6 pool by its delegated prefixes', () => {
    const space = new PoolSpace({
      cidr: '2001:db8:100::/48',
      gateway: null,
      excluded: ['2001:db8:100::/56'],
      delegatedPrefixLength: 56,
    });
    expect(space.units).toBe(256n);
    expect(space.size).toBe(255n);
    expect(space.textOf(space.firstFree([])!)).toBe('2001:db8:100:100::/56');
    expect(space.unitNamed('2001:db8:100:ff00::/56')).toEqual({ unit: 255n });
    expect(space.unitNamed('2001:db8:100:ff00::/64')).toEqual({
      problem: 'must be a /56 prefix of 2001:db8:100::/48',
    });
    expect(space.unitNamed('2001:db8:101::/56')).toEqual({ problem: 'is not inside 2001:db8:100::/48' });
  });

  it('should count 2^32 delegated /64 prefixes of a /32 exactly', () => {
    const space = new PoolSpace({
      cidr: '2001:db8::/32',
      gateway: null,
      excluded: [],
      delegatedPrefixLength: 64,
    });
    expect(space.size).toBe(2n ** 32n);
    expect(space.textOf(2n ** 32n - 1n)).toBe('2001:db8:ffff:ffff::/64');
  });
});
