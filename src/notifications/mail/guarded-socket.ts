import * as dns from 'node:dns';
import * as net from 'node:net';
import { performance } from 'node:perf_hooks';
import type { SMTPPoolOptions } from 'nodemailer';
import { isForbiddenAddress } from '../../common/net/public-address';

/** The code of the error a refused address fails a send with (src/notifications/mail/mail-sender.ts reads it). */
export const PRIVATE_ADDRESS = 'EPRIVATEADDRESS';

/**
 * The server's address is private, loopback, link-local or reserved, and private addresses are not allowed. `permanent`
 * when the host is an IP address, which no later DNS answer can change; a name is only refused for now.
 */
export class PrivateAddressError extends Error {
  readonly code = PRIVATE_ADDRESS;

  constructor(
    host: string,
    address: string,
    readonly permanent: boolean,
  ) {
    super(
      host === address
        ? `${host} is a private or reserved address: not connecting to it`
        : `${host} resolves to ${address}, a private or reserved address: not connecting to it`,
    );
  }
}

export interface SocketPolicy {
  /** False: every address the host has must be public (src/common/net/public-address.ts), checked when connecting. */
  allowPrivate: boolean;
  /** From the start of the lookup to the open TCP connection (nodemailer's connectionTimeout). */
  connectionTimeoutMs: number;
  /** To resolve the host, within the connection timeout. */
  dnsTimeoutMs: number;
}

type GetSocket = NonNullable<SMTPPoolOptions['getSocket']>;

/**
 * nodemailer's getSocket: opens the TCP connection to the SMTP server itself and hands it over, connected. The host is
 * resolved once, every address it has (dns.lookup with `all`) is checked unless private ones are allowed, and the
 * connection goes to those very addresses: no second lookup happens that a re-pointed name (DNS rebinding) could
 * answer differently. The socket is plain: for `tls` (TLS from the first byte) nodemailer wraps it, and for STARTTLS it
 * upgrades it, both times presenting and verifying the host's name (its servername), not the address connected to.
 */
export function guardedGetSocket(policy: SocketPolicy): GetSocket {
  return (options, callback) => {
    const host = options.host ?? 'localhost';
    const port = Number(options.port);
    const started = performance.now();
    let settled = false;
    let socket: net.Socket | undefined;
    const fail = (error: Error) => {
      if (!settled) {
        settled = true;
        clearTimeout(deadline);
        socket?.destroy();
        callback(error);
      }
    };
    const deadline = setTimeout(
      () => fail(timeoutError(`${host} was not connected within ${policy.connectionTimeoutMs} ms`)),
      policy.connectionTimeoutMs,
    );
    const dnsTimeoutMs = Math.min(policy.dnsTimeoutMs, policy.connectionTimeoutMs);
    const connectTo = (addresses: dns.LookupAddress[]) => {
      if (settled) {
        return;
      }
      const forbidden = policy.allowPrivate
        ? undefined
        : addresses.find(({ address }) => isForbiddenAddress(address));
      if (forbidden) {
        return fail(new PrivateAddressError(host, forbidden.address, net.isIP(host) !== 0));
      }
      const remainingMs = policy.connectionTimeoutMs - (performance.now() - started);
      const opened = connect(host, port, addresses, remainingMs);
      socket = opened;
      const onError = (error: Error) => fail(error);
      opened.once('error', onError);
      opened.once('connect', () => {
        if (!settled) {
          settled = true;
          clearTimeout(deadline);
          opened.removeListener('error', onError);
          callback(null, { connection: opened });
        }
      });
    };
    // A throw on the way (an address the block list cannot read, a connect that throws) fails this connection too.
    resolve(host, dnsTimeoutMs).then(connectTo).catch(fail);
  };
}

/** The host's addresses: itself when it is one, else all of them from the system resolver (as a connection would). */
function resolve(host: string, timeoutMs: number): Promise<dns.LookupAddress[]> {
  const family = net.isIP(host);
  if (family !== 0) {
    return Promise.resolve([{ address: host, family }]);
  }
  return new Promise((done, fail) => {
    const timer = setTimeout(
      () => fail(Object.assign(new Error(`DNS lookup for ${host} timed out`), { code: dns.TIMEOUT })),
      timeoutMs,
    );
    dns.lookup(host, { all: true }, (error, addresses) => {
      clearTimeout(timer);
      if (error) {
        return fail(error);
      }
      if (addresses.length === 0) {
        return fail(Object.assign(new Error(`${host} has no address`), { code: dns.NOTFOUND }));
      }
      return done(addresses);
    });
  });
}

/**
 * A TCP connection to the one address, or with several, Node's alternating attempts (RFC 8305) over exactly these: its
 * lookup is answered from the list, never from DNS. Within one family each address gets its share of the time left.
 */
function connect(
  host: string,
  port: number,
  addresses: dns.LookupAddress[],
  remainingMs: number,
): net.Socket {
  if (addresses.length === 1) {
    return net.connect({ host: addresses[0].address, port });
  }
  const pinned: net.LookupFunction = (_hostname, lookupOptions, callback) => {
    if (lookupOptions.all) {
      const all = callback as unknown as (error: null, list: dns.LookupAddress[]) => void;
      return process.nextTick(() => all(null, addresses));
    }
    process.nextTick(() => callback(null, addresses[0].address, addresses[0].family));
  };
  const families = new Set(addresses.map(({ family }) => family));
  return net.connect({
    host,
    port,
    lookup: pinned,
    autoSelectFamily: true,
    autoSelectFamilyAttemptTimeout:
      families.size === 1 ? Math.max(Math.floor(remainingMs / addresses.length), 10) : undefined,
  });
}

function timeoutError(message: string): Error {
  return Object.assign(new Error(`Connection timeout: ${message}`), { code: 'ETIMEDOUT' });
}
