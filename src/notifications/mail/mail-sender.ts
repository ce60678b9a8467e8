import { createHash } from 'node:crypto';
import type { ConnectionOptions } from 'node:tls';
import {
  createTransport,
  type NodemailerError,
  type SMTPPoolOptions,
  type SMTPPoolSentMessageInfo,
  type Transporter,
} from 'nodemailer';
import { guardedGetSocket, PRIVATE_ADDRESS, type PrivateAddressError } from './guarded-socket';
import { buildMessage, type MailRefusal, type OutgoingMail } from './message';
import type { SmtpSettings } from '../../config/smtp-settings';

/** Waits and sizes; the defaults suit a real server, the specs shorten them. */
export interface MailSenderOptions {
  /** To open the TCP connection (and the TLS handshake of `tls`). */
  connectionTimeoutMs?: number;
  /** From the connection to the server's 220 greeting. */
  greetingTimeoutMs?: number;
  /** Silence on an open connection before it is given up. */
  socketTimeoutMs?: number;
  /** To resolve the host. */
  dnsTimeoutMs?: number;
  /** One message from start to end, however the server trickles its replies. */
  sendTimeoutMs?: number;
  /** Connections kept open per server and login, and how long one may sit idle before it is closed. */
  maxConnections?: number;
  idleTimeoutMs?: number;
  /** Servers (settings) with a pool at once; past it, the least recently used pool is closed. */
  maxTransports?: number;
  /** Certificate authorities to trust besides the system's (a private CA; the specs' self-signed certificate). */
  ca?: ConnectionOptions['ca'];
}

/** What became of one message. Sending never throws for an SMTP or network failure: it answers one of these. */
export type SendOutcome =
  /** The server took the message: its reply (`250 OK: queued as …`) and the Message-ID it went out with. */
  | { status: 'sent'; response: string; messageId: string }
  /**
   * Try again later: a 4xx reply, a timeout, a refused or reset connection, a DNS or TLS failure, a host name that
   * resolves to a private address where private addresses are not allowed.
   */
  | { status: 'temporary'; response: string; code: number | null }
  /**
   * Do not try again: a 5xx reply (535 bad login, 550 no such user, …), a message the server can never take, or a host
   * that is itself a private IP address where private addresses are not allowed.
   */
  | { status: 'permanent'; response: string; code: number | null }
  /** Refused before any connection: an address or a field that would inject headers (src/notifications/mail/message.ts). */
  | { status: 'refused'; refusal: MailRefusal };

/** A message as the notifications hand it over; the sender and Reply-To default to the settings'. */
export type MailContent = Omit<OutgoingMail, 'from' | 'reply_to'> &
  Partial<Pick<OutgoingMail, 'from' | 'reply_to'>>;

/** Where the connection may go. */
export interface SendPolicy {
  /**
   * False for a tenant's own server (unless MAIL_ALLOW_PRIVATE): every address its host resolves to when connecting
   * must be public, or nothing is sent. True for the instance's SMTP_URL, which may well be a relay on localhost.
   */
  allowPrivate: boolean;
}

type Transport = Transporter<SMTPPoolSentMessageInfo, SMTPPoolOptions>;

const DEFAULTS = {
  connectionTimeoutMs: 10_000,
  greetingTimeoutMs: 30_000,
  socketTimeoutMs: 60_000,
  dnsTimeoutMs: 10_000,
  sendTimeoutMs: 120_000,
  maxConnections: 2,
  idleTimeoutMs: 30_000,
  maxTransports: 100,
} satisfies MailSenderOptions;

/** A server's answer is kept for the notification's record, up to this many characters. */
export const MAX_RESPONSE_LENGTH = 500;

/**
 * Errors without a reply code that sending the same message again would meet again: a message or an envelope
 * nodemailer refuses, a login the server cannot do, a REQUIRETLS it does not support.
 */
const PERMANENT_ERRORS = new Set([
  'EENVELOPE',
  'EMESSAGE',
  'EAUTH',
  'ENOAUTH',
  'EREQUIRETLS',
  'EMAXRECIPIENTS',
  'ECONFIG',
  'EFILEACCESS',
  'EURLACCESS',
]);

/**
 * Sends mail over SMTP with nodemailer: one connection pool per server and login, kept between messages and closed by
 * close() (Nest calls onApplicationShutdown). Construct it with its options (a factory provider): it has no
 * dependencies to inject.
 */
export class MailSender {
  private readonly options: Required<Omit<MailSenderOptions, 'ca'>> & Pick<MailSenderOptions, 'ca'>;
  /** Pools by a hash of their server settings, least recently used first. */
  private readonly transports = new Map<string, Transport>();
  private closed = false;

  constructor(options: MailSenderOptions = {}) {
    this.options = { ...DEFAULTS, ...options };
  }

  async send(
    settings: SmtpSettings,
    mail: MailContent,
    policy: SendPolicy = { allowPrivate: true },
  ): Promise<SendOutcome> {
    const built = buildMessage({
      ...mail,
      from: mail.from ?? settings.from,
      reply_to: mail.reply_to === undefined ? settings.reply_to : mail.reply_to,
    });
    if (built.refused) {
      return { status: 'refused', refusal: built };
    }
    if (this.closed) {
      return { status: 'temporary', response: 'the mail sender is shut down', code: null };
    }
    try {
      const info = await this.transportFor(settings, policy).sendMail({
        ...built.message,
        signal: AbortSignal.timeout(this.options.sendTimeoutMs),
      });
      return { status: 'sent', response: clean(info.response, settings), messageId: info.messageId };
    } catch (error) {
      return failureOutcome(error, settings);
    }
  }

  /** Closes every pool: idle connections at once, one delivering a message when it is done. */
  close(): void {
    this.closed = true;
    for (const transport of this.transports.values()) {
      transport.close();
    }
    this.transports.clear();
  }

  onApplicationShutdown(): void {
    this.close();
  }

  private transportFor(settings: SmtpSettings, policy: SendPolicy): Transport {
    const key = transportKey(settings, policy);
    const cached = this.transports.get(key);
    if (cached) {
      this.transports.delete(key);
      this.transports.set(key, cached);
      return cached;
    }
    const transport = createTransport(this.poolOptions(settings, policy));
    // A pool reports each failure to the send it ends; an 'error' event without a listener would end the process.
    transport.on('error', () => undefined);
    this.transports.set(key, transport);
    if (this.transports.size > this.options.maxTransports) {
      const [oldestKey, oldest] = this.transports.entries().next().value as [string, Transport];
      this.transports.delete(oldestKey);
      oldest.close();
    }
    return transport;
  }

  private poolOptions(settings: SmtpSettings, policy: SendPolicy): SMTPPoolOptions & { pool: true } {
    const options = this.options;
    return {
      // Resolves the host, checks its addresses (unless private ones are allowed) and connects to them; nodemailer then
      // speaks TLS or STARTTLS over that connection to the host's name (src/notifications/mail/guarded-socket.ts).
      getSocket: guardedGetSocket({
        allowPrivate: policy.allowPrivate,
        connectionTimeoutMs: options.connectionTimeoutMs,
        dnsTimeoutMs: options.dnsTimeoutMs,
      }),
      pool: true,
      host: settings.host,
      port: settings.port,
      secure: settings.tls === 'tls',
      requireTLS: settings.tls === 'starttls',
      ignoreTLS: settings.tls === 'none',
      auth: settings.user ? { user: settings.user, pass: settings.password ?? '' } : undefined,
      tls: options.ca === undefined ? undefined : { ca: options.ca },
      connectionTimeout: options.connectionTimeoutMs,
      greetingTimeout: options.greetingTimeoutMs,
      socketTimeout: options.socketTimeoutMs,
      maxConnections: options.maxConnections,
      idleTimeout: options.idleTimeoutMs,
      // A connection dropped in the middle of a message is tried once more on a fresh one (a pooled connection the
      // server closed while idle); past that, the notification's own retries take over.
      maxRequeues: 1,
      disableFileAccess: true,
      disableUrlAccess: true,
      logger: false,
    };
  }
}

/**
 * The pool's identity: the server, the login and whether private addresses are allowed (a pool allowing them never
 * serves a send that must not reach them). Hashed, so the password is not a map key anyone could print.
 */
function transportKey(settings: SmtpSettings, policy: SendPolicy): string {
  const identity = [
    settings.host,
    settings.port,
    settings.tls,
    settings.user ?? '',
    settings.password ?? '',
    policy.allowPrivate,
  ];
  return createHash('sha256').update(JSON.stringify(identity)).digest('hex');
}

/** What the server said, or what went wrong, as an outcome: 5xx (but 503, a confused session) is final. */
function failureOutcome(error: unknown, settings: SmtpSettings): SendOutcome {
  // Duck-typed: an error raised by Node's own modules need not be an instance of this realm's Error (in Jest it is not).
  const failure: Partial<NodemailerError> =
    typeof error === 'object' && error !== null ? error : { message: String(error) };
  const code = typeof failure.responseCode === 'number' ? failure.responseCode : null;
  const text =
    failure.response || `${failure.code ?? failure.name ?? 'Error'}: ${failure.message ?? 'unknown error'}`;
  const response = clean(text, settings);
  if (failure.code === PRIVATE_ADDRESS) {
    // A private IP address stays private: final. A name may resolve elsewhere later (it pointed somewhere public when
    // it was saved), so it is tried again, and refused again, until the notification's retries run out.
    const permanent = (failure as Partial<PrivateAddressError>).permanent === true;
    return { status: permanent ? 'permanent' : 'temporary', response, code: null };
  }
  const permanent =
    code !== null
      ? code >= 500 && code < 600 && code !== 503
      : failure.code !== undefined && PERMANENT_ERRORS.has(failure.code);
  return { status: permanent ? 'permanent' : 'temporary', response, code };
}

/**
 * A reply or an error message fit for a notification's record: on one line, at most MAX_RESPONSE_LENGTH characters,
 * and without the password (raw, or base64 as AUTH PLAIN and LOGIN send it), should a server or an error echo it.
 */
function clean(text: string | undefined, settings: SmtpSettings): string {
  let flat = (text ?? '').replace(/\s+/g, ' ').trim();
  const password = settings.password;
  if (password) {
    const secrets = [
      password,
      Buffer.from(password).toString('base64'),
      Buffer.from(`\u0000${settings.user ?? ''}\u0000${password}`).toString('base64'),
    ];
    for (const secret of secrets) {
      flat = flat.split(secret).join('[redacted]');
    }
  }
  return flat.length > MAX_RESPONSE_LENGTH ? `${flat.slice(0, MAX_RESPONSE_LENGTH - 1)}…` : flat;
}
