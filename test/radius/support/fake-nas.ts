import { createSocket, type RemoteInfo } from 'node:dgram';
import * as radius from 'radius';
import { flattenAttributes, useVendorDictionary } from './radius-client';

/** One RFC 5176 request the fake NAS got. */
export interface ReceivedRequest {
  code: 'Disconnect-Request' | 'CoA-Request';
  identifier: number;
  /** Decoded with the dictionaries; vendor attributes (Mikrotik-Rate-Limit, WISPr-…) by name at the top level. */
  attributes: Record<string, unknown>;
  /** Whether the Request Authenticator (and a Message-Authenticator, if any) verifies with the secret
   *  (RFC 5176 §2.3). */
  authenticatorValid: boolean;
  from: { address: string; port: number };
  raw: Buffer;
}

export type FakeNasAnswer = 'ack' | 'nak' | 'silent';

export interface FakeNas {
  /** Where it listens (UDP). */
  address: string;
  port: number;
  /** Every Disconnect-Request and CoA-Request so far, in arrival order, retransmissions included. */
  received: ReceivedRequest[];
  /** How to answer the next requests: 'ack' (default), 'nak' (with Error-Cause 503 Session-Context-Not-Found), or
   *  'silent' (no answer: the sender must retry and give up). */
  answer(mode: FakeNasAnswer): void;
  /** Resolves with `received` once it holds at least `count` requests; rejects after timeoutMs (default 5000). */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  /** Forgets what was received. */
  clear(): void;
  close(): Promise<void>;
}

const RESPONSES = {
  'Disconnect-Request': { ack: 'Disconnect-ACK', nak: 'Disconnect-NAK' },
  'CoA-Request': { ack: 'CoA-ACK', nak: 'CoA-NAK' },
} as const;

function isRfc5176Request(code: string): code is keyof typeof RESPONSES {
  return code in RESPONSES;
}

/**
 * A UDP "router" that takes RFC 5176 Disconnect/CoA requests the way a NAS does: it checks each request's
 * authenticator against the secret and records it, answers a valid one with a signed ACK or NAK (or not at all, in
 * 'silent' mode), and never answers a wrongly signed one. Anything else (other codes, undecodable packets) is dropped.
 */
export async function startFakeNas(options: {
  address: string;
  secret: string;
  port?: number;
}): Promise<FakeNas> {
  useVendorDictionary();
  const { address, secret } = options;
  const socket = createSocket('udp4');
  const received: ReceivedRequest[] = [];
  const waiters = new Set<() => void>();
  let mode: FakeNasAnswer = 'ack';

  socket.on('message', (raw: Buffer, from: RemoteInfo) => {
    let packet: ReturnType<typeof radius.decode>;
    let authenticatorValid = true;
    try {
      // node-radius checks a Disconnect/CoA-Request's authenticator against the secret and throws when it differs.
      packet = radius.decode({ packet: raw, secret });
    } catch {
      authenticatorValid = false;
      try {
        packet = radius.decode_without_secret({ packet: raw });
      } catch {
        return;
      }
    }
    const code = packet.code;
    if (!isRfc5176Request(code)) {
      return;
    }
    received.push({
      code,
      identifier: packet.identifier,
      attributes: flattenAttributes(packet),
      authenticatorValid,
      from: { address: from.address, port: from.port },
      raw: Buffer.from(raw),
    });
    for (const wake of waiters) {
      wake();
    }
    if (!authenticatorValid || mode === 'silent') {
      return;
    }
    const reply = radius.encode_response({
      packet,
      code: RESPONSES[code][mode],
      secret,
      attributes: mode === 'nak' ? [['Error-Cause', 'Session-Context-Not-Found']] : [],
    });
    socket.send(reply, from.port, from.address);
  });

  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind({ address, port: options.port ?? 0 }, () => {
      socket.off('error', reject);
      resolve();
    });
  });

  return {
    address,
    port: socket.address().port,
    received,
    answer(next) {
      mode = next;
    },
    waitFor(count, timeoutMs = 5000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (received.length >= count) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve(received);
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`fake NAS: ${received.length} of ${count} requests within ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    clear() {
      received.length = 0;
    },
    close() {
      return new Promise((resolve) => socket.close(() => resolve()));
    },
  };
}
