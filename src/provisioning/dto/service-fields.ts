import { registerDecorator, type ValidationOptions } from 'class-validator';
import { parseNetwork } from '../ipam/ip-math';

/** What a PPPoE username may hold. */
const PPPOE_USERNAME_CHARS = '[A-Za-z0-9._@-]';
export const PPPOE_USERNAME = new RegExp(`^${PPPOE_USERNAME_CHARS}{3,64}$`);
/** Text made only of what a PPPoE username may hold: the only text a part of one can be. */
export const PPPOE_USERNAME_PART = new RegExp(`^${PPPOE_USERNAME_CHARS}+$`);
/** Printable ASCII: what every CPE's PPPoE client and every RADIUS attribute can carry. */
export const PPPOE_PASSWORD = /^[\x20-\x7e]{8,128}$/;

const MAC_FORMS = [
  /^([0-9a-f]{2})[:-]([0-9a-f]{2})[:-]([0-9a-f]{2})[:-]([0-9a-f]{2})[:-]([0-9a-f]{2})[:-]([0-9a-f]{2})$/i,
  /^([0-9a-f]{2})([0-9a-f]{2})\.([0-9a-f]{2})([0-9a-f]{2})\.([0-9a-f]{2})([0-9a-f]{2})$/i,
  /^([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i,
];

/** A MAC address in any usual form (`AA-BB-…`, `aabb.ccdd.eeff`, `aabbccddeeff`) as `aa:bb:cc:dd:ee:ff`, or null. */
export function normalizeMac(value: string): string | null {
  for (const form of MAC_FORMS) {
    const match = form.exec(value.trim());
    if (match) {
      return match.slice(1).join(':').toLowerCase();
    }
  }
  return null;
}

/** A dotted-quad IPv4 address a subscriber can be given: not this-network, loopback, multicast or reserved. */
export function isUnicastIpv4(value: unknown): boolean {
  if (typeof value !== 'string' || !/^\d{1,3}(\.\d{1,3}){3}$/.test(value)) {
    return false;
  }
  const octets = value.split('.').map(Number);
  if (octets.some((octet, index) => octet > 255 || String(octet) !== value.split('.')[index])) {
    return false;
  }
  const [first] = octets;
  return first !== 0 && first !== 127 && first < 224;
}

function custom(
  name: string,
  message: string,
  validate: (value: unknown) => boolean,
  options?: ValidationOptions,
) {
  return (object: object, propertyName: string | symbol) =>
    registerDecorator({
      name,
      target: object.constructor,
      propertyName: String(propertyName),
      options: { message: `${String(propertyName)} ${message}`, ...options },
      validator: { validate },
    });
}

export const IsMacAddress = (options?: ValidationOptions) =>
  custom(
    'isMacAddress',
    'must be a MAC address, e.g. aa:bb:cc:dd:ee:ff',
    (value) => typeof value === 'string' && normalizeMac(value) !== null,
    options,
  );

export const IsUnicastIpv4 = (options?: ValidationOptions) =>
  custom('isUnicastIpv4', 'must be a unicast IPv4 address, e.g. 203.0.113.10', isUnicastIpv4, options);

/** An IPv6 prefix as `address/length` (the API checks it against the pool that holds it). */
export const IsIpv6Prefix = (options?: ValidationOptions) =>
  custom(
    'isIpv6Prefix',
    'must be an IPv6 prefix, e.g. 2001:db8:100:100::/56',
    (value) => typeof value === 'string' && parseNetwork(value)?.family === 6,
    options,
  );

/**
 * A NAS's address: a unicast IPv4 address, loopback included (a BNG such as accel-ppp may run on the host of
 * FreeRADIUS and send from 127.0.0.1).
 */
export const IsNasIpv4 = (options?: ValidationOptions) =>
  custom(
    'isNasIpv4',
    'must be a unicast IPv4 address, e.g. 192.0.2.10',
    (value) =>
      isUnicastIpv4(value) || (typeof value === 'string' && isUnicastIpv4(value.replace(/^127\./, '1.'))),
    options,
  );
