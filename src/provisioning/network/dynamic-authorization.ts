import { createSocket } from 'node:dgram';
import { randomInt } from 'node:crypto';
import { join } from 'node:path';
import * as radius from 'radius';

// The vendor attributes of a plan's rate (Mikrotik-Rate-Limit, WISPr-Bandwidth-Max-*); the RFC ones ship with it.
radius.add_dictionary(join(__dirname, 'radius-vendors.dictionary'));

/** RFC 5176 requests a NAS takes: end a session, or change what it may do. */
export type DynamicRequestCode = 'Disconnect-Request' | 'CoA-Request';

/** What a NAS answered: ACK, NAK, or nothing at all after every retry. */
export type DynamicAnswer = 'acked' | 'nak' | 'timeout';

/** An attribute as the `radius` package encodes it; a vendor's go inside ['Vendor-Specific', vendor, [...]]. */
export type DynamicAttribute =
  | [name: string, value: string | number]
  | ['Vendor-Specific', vendor: string, attributes: [name: string, value: string | number][]];

export interface DynamicRequest {
  code: DynamicRequestCode;
  host: string;
  port: number;
  secret: string;
  attributes: DynamicAttribute[];
  /** Wait for an answer this long per try… */
  timeoutMs: number;
  /** …and send the same packet again this many times before giving up. */
  retries: number;
}

const ACK = { 'Disconnect-Request': 'Disconnect-ACK', 'CoA-Request': 'CoA-ACK' } as const;
const NAK = { 'Disconnect-Request': 'Disconnect-NAK', 'CoA-Request': 'CoA-NAK' } as const;

/**
 * Sends one RFC 5176 request to a NAS and answers what it said. The packet is built and signed by the `radius` package
 * (Request Authenticator = MD5 of the packet with a zero authenticator and the shared secret, RFC 5176 §2.3);
 * retransmissions are the same packet (same identifier), as §2.3 wants, so a NAS that answered a lost reply again
 * sees a duplicate. Only an answer to this identifier, signed with the secret, counts; anything else is ignored.
 */
export async function sendDynamicRequest(request: DynamicRequest): Promise<DynamicAnswer> {
  const packet = radius.encode({
    code: request.code,
    identifier: randomInt(256),
    secret: request.secret,
    attributes: request.attributes,
  });
  const identifier = packet.readUInt8(1);
  const socket = createSocket(request.host.includes(':') ? 'udp6' : 'udp4');
  try {
    return await new Promise<DynamicAnswer>((resolve, reject) => {
      let tries = 0;
      let timer: NodeJS.Timeout | undefined;
      const send = () => {
        if (tries > request.retries) {
          resolve('timeout');
          return;
        }
        tries += 1;
        socket.send(packet, request.port, request.host, (error) => {
          if (error) {
            reject(error);
          }
        });
        timer = setTimeout(send, request.timeoutMs);
      };
      socket.on('message', (message) => {
        if (message.length < 20 || message.readUInt8(1) !== identifier) {
          return;
        }
        let answer: radius.RadiusPacket;
        try {
          if (!radius.verify_response({ request: packet, response: message, secret: request.secret })) {
            return;
          }
          answer = radius.decode({ packet: message, secret: request.secret });
        } catch {
          return;
        }
        if (answer.code === ACK[request.code] || answer.code === NAK[request.code]) {
          clearTimeout(timer);
          resolve(answer.code === ACK[request.code] ? 'acked' : 'nak');
        }
      });
      socket.on('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
      send();
    });
  } finally {
    socket.close();
  }
}
