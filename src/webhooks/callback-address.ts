import * as dns from 'node:dns';
import type { LookupFunction } from 'node:net';
import { isForbiddenAddress, ForbiddenAddressError } from '../common/net/public-address';

// The list itself is shared infrastructure: a tenant's mail server is held to it too.
export { assertPublicHost, ForbiddenAddressError, isForbiddenAddress } from '../common/net/public-address';

/** The host part of a URL without IPv6 brackets. */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '');
}

/**
 * A lookup for http.request that checks every resolved address at connect time, so a name that pointed somewhere
 * public at registration and is re-pointed at 127.0.0.1 later (DNS rebinding) is still refused.
 */
export const guardedLookup: LookupFunction = (hostname, options, callback) => {
  dns.lookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) {
      return callback(error, '', 0);
    }
    const list: dns.LookupAddress[] = addresses;
    const forbidden = list.find(({ address }) => isForbiddenAddress(address));
    if (forbidden) {
      return callback(
        new ForbiddenAddressError(`${hostname} resolves to ${forbidden.address}, a private address`),
        '',
        0,
      );
    }
    if (options.all) {
      return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, list);
    }
    return callback(null, list[0].address, list[0].family);
  });
};
