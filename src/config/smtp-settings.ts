import { isIP } from 'node:net';
import { parseMailbox } from './mailbox';

export const SMTP_TLS_MODES = ['none', 'starttls', 'tls'] as const;
/**
 * How the connection is protected: `none` never encrypts (STARTTLS is not used even when offered), `starttls` upgrades
 * a plain connection and fails when the server cannot, `tls` speaks TLS from the first byte (SMTPS, port 465).
 */
export type SmtpTlsMode = (typeof SMTP_TLS_MODES)[number];

/** Where and as whom mail is sent: the instance default (SMTP_URL, MAIL_FROM) or a tenant's own. */
export interface SmtpSettings {
  host: string;
  port: number;
  tls: SmtpTlsMode;
  user?: string;
  /** Write-only: never in a log line, an outcome, an error or a response (describeSmtp leaves it out). */
  password?: string;
  /** The From mailbox: `billing@example.com` or `Example ISP <billing@example.com>`. */
  from: string;
  /** The Reply-To mailbox, in the same forms; none when unset. */
  reply_to?: string;
}

/** The settings SMTP_URL and MAIL_FROM describe, null when neither is set, or which variable is wrong and why. */
export type SmtpEnvResult =
  { settings: SmtpSettings | null } | { variable: 'SMTP_URL' | 'MAIL_FROM'; problem: string };

type SmtpServer = Pick<SmtpSettings, 'host' | 'port' | 'tls' | 'user' | 'password'>;

const DEFAULT_PORTS = { 'smtp:': 587, 'smtps:': 465 } as const;
const HOST_NAME =
  /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$/;
const URL_FORMS =
  'Write smtp://user:password@host:587 (STARTTLS, the default for smtp://), smtps://user:password@host:465 (TLS ' +
  'from the first byte) or smtp://host:25?tls=none (no encryption); percent-encode reserved characters of the user ' +
  'and the password';
const MAILBOX_FORMS =
  'an address (billing@example.com) or a name and an address (Example ISP <billing@example.com>)';

/**
 * Reads the instance's default SMTP server and sender from SMTP_URL and MAIL_FROM. Both or neither: one without the
 * other is refused, since it would either send from nowhere or hold a sender nothing uses. The problem never repeats
 * SMTP_URL itself, which may hold a password; src/config/app-config.ts turns it into its ConfigError.
 */
export function parseSmtpEnv(env: Record<string, string | undefined>): SmtpEnvResult {
  const rawUrl = env.SMTP_URL?.trim() ?? '';
  const rawFrom = env.MAIL_FROM?.trim() ?? '';
  if (rawUrl === '' && rawFrom === '') {
    return { settings: null };
  }
  if (rawUrl === '') {
    return {
      variable: 'SMTP_URL',
      problem: `is required when MAIL_FROM is set: mail goes out through it. ${URL_FORMS}`,
    };
  }
  const server = parseSmtpUrl(rawUrl);
  if ('problem' in server) {
    return { variable: 'SMTP_URL', problem: server.problem };
  }
  if (rawFrom === '') {
    return {
      variable: 'MAIL_FROM',
      problem: `is required when SMTP_URL is set: the sender of every message, ${MAILBOX_FORMS}`,
    };
  }
  const from = parseMailbox(rawFrom);
  if ('problem' in from) {
    return {
      variable: 'MAIL_FROM',
      problem: `must be ${MAILBOX_FORMS}, got ${JSON.stringify(rawFrom)} (${from.problem})`,
    };
  }
  return { settings: { ...server, from: rawFrom } };
}

/** Reads an `smtp://` or `smtps://` URL into the server part of the settings, or says why it is refused. */
export function parseSmtpUrl(raw: string): SmtpServer | { problem: string } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { problem: `is not a valid URL. ${URL_FORMS}` };
  }
  if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') {
    return { problem: `must use smtp: or smtps:, got "${url.protocol}". ${URL_FORMS}` };
  }
  if ((url.pathname !== '' && url.pathname !== '/') || url.hash) {
    return { problem: `must not have a path or a fragment. ${URL_FORMS}` };
  }
  const host = hostOf(url);
  if (host === null) {
    return { problem: `must name a host (a name or an IP address in ASCII). ${URL_FORMS}` };
  }
  const port = url.port === '' ? DEFAULT_PORTS[url.protocol] : Number(url.port);
  if (port === 0) {
    return { problem: `must name a port between 1 and 65535. ${URL_FORMS}` };
  }
  const tls = tlsOf(url);
  if (typeof tls === 'object') {
    return tls;
  }
  const credentials = credentialsOf(url);
  if ('problem' in credentials) {
    return credentials;
  }
  return { host, port, tls, ...credentials };
}

/**
 * The settings for a log line or the boot message: `smtp://mail.example.com:587 (starttls, user billing)`. Never the
 * password, not even whether one is set beyond the user.
 */
export function describeSmtp(settings: Pick<SmtpSettings, 'host' | 'port' | 'tls' | 'user'>): string {
  const scheme = settings.tls === 'tls' ? 'smtps' : 'smtp';
  const host = isIP(settings.host) === 6 ? `[${settings.host}]` : settings.host;
  const mode = settings.tls === 'none' ? 'no TLS' : settings.tls;
  const login = settings.user ? `user ${settings.user}` : 'no login';
  return `${scheme}://${host}:${settings.port} (${mode}, ${login})`;
}

function hostOf(url: URL): string | null {
  const host = url.hostname;
  if (host.startsWith('[') && host.endsWith(']')) {
    const inner = host.slice(1, -1);
    return isIP(inner) === 6 ? inner : null;
  }
  return HOST_NAME.test(host) ? host.toLowerCase() : null;
}

function tlsOf(url: URL): SmtpTlsMode | { problem: string } {
  const keys = [...url.searchParams.keys()];
  const unknown = keys.find((key) => key !== 'tls');
  if (unknown !== undefined) {
    return { problem: `has an unknown parameter "${unknown}": only tls is read. ${URL_FORMS}` };
  }
  const values = url.searchParams.getAll('tls');
  if (values.length > 1) {
    return { problem: `must give tls at most once. ${URL_FORMS}` };
  }
  const [value] = values;
  if (url.protocol === 'smtps:') {
    return value === undefined || value === 'tls'
      ? 'tls'
      : { problem: `is smtps://, TLS from the first byte, so tls=${value} does not apply. ${URL_FORMS}` };
  }
  if (value === undefined || value === 'starttls' || value === 'none') {
    return value ?? 'starttls';
  }
  return {
    problem: `must have tls=starttls or tls=none on smtp:// (smtps:// for TLS), got "${value}". ${URL_FORMS}`,
  };
}

function credentialsOf(url: URL): Pick<SmtpServer, 'user' | 'password'> | { problem: string } {
  let user: string;
  let password: string;
  try {
    user = decodeURIComponent(url.username);
    password = decodeURIComponent(url.password);
  } catch {
    return { problem: `has a malformed percent-encoding in its user or password. ${URL_FORMS}` };
  }
  if (/[\r\n\0]/.test(user) || /[\r\n\0]/.test(password)) {
    return { problem: 'must not have a line break or a NUL character in its user or password' };
  }
  if (user === '' && password === '') {
    return {};
  }
  if (user === '' || password === '') {
    return { problem: `must give both a user and a password, or neither. ${URL_FORMS}` };
  }
  return { user, password };
}
