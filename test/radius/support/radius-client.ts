import { createHash, createHmac } from 'node:crypto';
import { createSocket, type RemoteInfo } from 'node:dgram';
import { join } from 'node:path';
import * as radius from 'radius';

/** The vendor attributes (Mikrotik, WISPr) the API sends, in FreeRADIUS's dictionary format. */
export const VENDOR_DICTIONARY = join(
  __dirname,
  '../../../src/provisioning/network/radius-vendors.dictionary',
);

let vendorDictionaryAdded = false;

/**
 * Adds the vendor dictionary to node-radius once per module registry (jest gives each test file its own). It must
 * run before the first encode or decode: node-radius reads its dictionaries once, on first use, and ignores later
 * additions.
 */
export function useVendorDictionary(): void {
  if (!vendorDictionaryAdded) {
    radius.add_dictionary(VENDOR_DICTIONARY);
    vendorDictionaryAdded = true;
  }
}

/**
 * The attributes of a decoded packet with vendor attributes lifted to the top level by name (node-radius nests them
 * under `Vendor-Specific`), so a test reads `attributes['Mikrotik-Rate-Limit']` like any other attribute. An attribute
 * that occurs more than once is an array, as node-radius decodes it.
 */
export function flattenAttributes(packet: { attributes: Record<string, unknown> }): Record<string, unknown> {
  const { ['Vendor-Specific']: vendor, ...attributes } = packet.attributes;
  if (vendor && typeof vendor === 'object' && !Buffer.isBuffer(vendor)) {
    Object.assign(attributes, vendor);
  }
  return attributes;
}

/** Attributes as node-radius encodes them: `[name, value]` pairs (repeatable, and the only way to send a VSA:
 *  `['Vendor-Specific', 14988, [['Mikrotik-Rate-Limit', '10M/10M']]]`) or an object of single values. */
export type RadiusAttributes = [string, ...unknown[]][] | Record<string, unknown>;

export interface RadiusReply {
  /** The reply's packet code, e.g. 'Access-Accept', 'Access-Reject', 'Accounting-Response', 'Disconnect-ACK'. */
  code: string;
  /** Decoded with the dictionaries; vendor attributes by name at the top level (see flattenAttributes). */
  attributes: Record<string, unknown>;
}

export type RadiusRequestCode =
  'Access-Request' | 'Accounting-Request' | 'Status-Server' | 'Disconnect-Request' | 'CoA-Request';

export interface RadiusRequestOptions {
  server: { address: string; port: number };
  secret: string;
  code: RadiusRequestCode;
  attributes: RadiusAttributes;
  /** Local address to send from, e.g. '127.0.0.2' to speak as that NAS (Linux routes all of 127/8 to lo). */
  source?: string;
  /** How long to wait for an answer per try (default 1000 ms). */
  timeoutMs?: number;
  /** How many times the same packet is sent before giving up (default 3), as a NAS retransmits. */
  tries?: number;
}

/**
 * Sends one RADIUS request from a fresh UDP socket and resolves with the decoded reply. A retry resends the identical
 * packet (same identifier and authenticator), so the server treats it as a duplicate, as from a real NAS. Rejects
 * when no answer comes after all tries, or when the reply does not verify with the secret (replyIsSigned).
 */
export async function radiusRequest(options: RadiusRequestOptions): Promise<RadiusReply> {
  useVendorDictionary();
  const { server, secret, code } = options;
  const timeoutMs = options.timeoutMs ?? 1000;
  const tries = options.tries ?? 3;
  const identifier = Math.floor(Math.random() * 256);
  // encode() appends a Message-Authenticator to the array it is given: hand it a copy, not the caller's.
  const attributes = Array.isArray(options.attributes) ? [...options.attributes] : { ...options.attributes };
  const packet = radius.encode({ code, secret, identifier, attributes });

  const socket = createSocket('udp4');
  const replies: Buffer[] = [];
  let wake: (() => void) | null = null;
  const socketErrors: Error[] = [];
  socket.on('message', (message: Buffer, from: RemoteInfo) => {
    if (
      from.address === server.address &&
      from.port === server.port &&
      message.length >= 20 &&
      message[1] === identifier
    ) {
      replies.push(message);
      wake?.();
    }
  });
  socket.on('error', (error) => {
    socketErrors.push(error);
    wake?.();
  });

  try {
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind({ address: options.source ?? '127.0.0.1', port: 0 }, () => {
        socket.off('error', reject);
        resolve();
      });
    });
    for (let attempt = 0; attempt < tries && replies.length === 0; attempt++) {
      socket.send(packet, server.port, server.address);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, timeoutMs);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = null;
      if (socketErrors.length > 0) {
        throw socketErrors[0];
      }
    }
    const reply = replies[0];
    if (!reply) {
      throw new Error(
        `radiusRequest: no answer to ${code} from ${server.address}:${server.port} ` +
          `after ${tries} tries of ${timeoutMs} ms`,
      );
    }
    if (!replyIsSigned(packet, reply, secret)) {
      throw new Error(
        `radiusRequest: the answer to ${code} does not verify with the secret (bad authenticator)`,
      );
    }
    const decoded = radius.decode({ packet: reply, secret });
    return { code: decoded.code, attributes: flattenAttributes(decoded) };
  } finally {
    socket.close();
  }
}

/** RFC 2869 Message-Authenticator. */
const MESSAGE_AUTHENTICATOR = 80;

/**
 * Whether a reply is signed with the secret: its Response Authenticator (RFC 2865 §3: MD5 over the reply with the
 * request's authenticator in its place, then the secret) and, when it carries one, its Message-Authenticator (HMAC-MD5
 * over the same with that attribute zeroed). node-radius' verify_response also insists on a Message-Authenticator in
 * the reply whenever the request had one, which FreeRADIUS 3.2.1 does not send in its answer to Status-Server.
 */
export function replyIsSigned(request: Buffer, reply: Buffer, secret: string): boolean {
  const length = reply.readUInt16BE(2);
  if (length < 20 || length > reply.length) {
    return false;
  }
  const signed = Buffer.from(reply.subarray(0, length));
  request.copy(signed, 4, 4, 20);
  const expected = createHash('md5').update(signed).update(secret).digest();
  if (!expected.equals(reply.subarray(4, 20))) {
    return false;
  }
  for (let offset = 20; offset + 2 <= length; offset += signed[offset + 1]) {
    const attributeLength = signed[offset + 1];
    if (attributeLength < 2) {
      return false;
    }
    if (signed[offset] === MESSAGE_AUTHENTICATOR && attributeLength === 18) {
      signed.fill(0, offset + 2, offset + 18);
      const mac = createHmac('md5', secret).update(signed).digest();
      return mac.equals(reply.subarray(offset + 2, offset + 18));
    }
  }
  return true;
}

/** What every helper below needs besides its own attributes. */
export type RequestTarget = Omit<RadiusRequestOptions, 'code' | 'attributes'>;

/** A PAP Access-Request: node-radius hides User-Password with the secret and the Request Authenticator. */
export function accessRequest(
  options: RequestTarget & { userName: string; password: string; attributes?: [string, ...unknown[]][] },
): Promise<RadiusReply> {
  const { userName, password, attributes = [], ...target } = options;
  return radiusRequest({
    ...target,
    code: 'Access-Request',
    attributes: [['User-Name', userName], ['User-Password', password], ...attributes],
  });
}

/**
 * An Accounting-Request with Acct-Status-Type `statusType`. `inputBytes` / `outputBytes` (byte counters that may pass
 * 2^32) are split into Acct-{Input,Output}-Octets (the low 32 bits) and -Gigawords (the rest), as a NAS reports them.
 */
export function accountingRequest(
  options: RequestTarget & {
    statusType: 'Start' | 'Interim-Update' | 'Stop' | 'Accounting-On' | 'Accounting-Off';
    attributes: [string, ...unknown[]][];
    inputBytes?: number;
    outputBytes?: number;
  },
): Promise<RadiusReply> {
  const { statusType, attributes, inputBytes, outputBytes, ...target } = options;
  const counters: [string, number][] = [];
  if (inputBytes !== undefined) {
    counters.push(
      ['Acct-Input-Octets', inputBytes % 2 ** 32],
      ['Acct-Input-Gigawords', Math.floor(inputBytes / 2 ** 32)],
    );
  }
  if (outputBytes !== undefined) {
    counters.push(
      ['Acct-Output-Octets', outputBytes % 2 ** 32],
      ['Acct-Output-Gigawords', Math.floor(outputBytes / 2 ** 32)],
    );
  }
  return radiusRequest({
    ...target,
    code: 'Accounting-Request',
    attributes: [['Acct-Status-Type', statusType], ...attributes, ...counters],
  });
}
