import { isIP } from 'node:net';
import { resolve } from 'node:path';
import { type ImportsConfig, importsConfig } from './imports-config';
import { type ProvisioningConfig, provisioningConfig } from './provisioning-config';

export type { ProvisioningConfig };
import { type PortalConfig, portalConfig } from './portal-config';
import { type AbuseConfig, abuseConfig } from './abuse-config';
import { parseSmtpEnv, type SmtpSettings } from './smtp-settings';
import { parseTrustProxy, type TrustProxy } from './trust-proxy';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Typed, validated configuration. Built once at boot from the environment. */
export interface AppConfig {
  port: number;
  /** The address the HTTP server binds: 0.0.0.0 (every IPv4 interface) unless HOST says otherwise. */
  host: string;
  /** Browser origins allowed to call the API cross-origin (CORS); empty: none. */
  corsOrigins: string[];
  /**
   * Where clients reach this API (behind a proxy, its public address): the served OpenAPI document's `servers`.
   * null (unset): each served document names the origin its own request came in on.
   */
  publicBaseUrl: string | null;
  databaseUrl: string | null;
  /** Connections in the pool; always 1 on the embedded database. */
  databasePoolMax: number;
  databaseTimeouts: DatabaseTimeouts;
  dataDir: string;
  redisUrl: string | null;
  bootstrapToken: string | null;
  logLevel: LogLevel;
  rateLimit: { max: number; windowS: number };
  abuse: AbuseConfig;
  /** Express' `trust proxy`: false, a hop count, or the proxies' addresses/subnets (never `true`). */
  trustProxy: TrustProxy;
  /** How long an authenticated token is remembered in-process; revocation reaches other instances within it. */
  tokenCacheTtlMs: number;
  webhooks: WebhookConfig;
  provisioning: ProvisioningConfig;
  billing: BillingConfig;
  imports: ImportsConfig;
  automation: AutomationConfig;
  /**
   * The instance's default mail server and sender (SMTP_URL, MAIL_FROM), for tenants without settings of their own;
   * null when neither is set. Its password never goes into a log line: describeSmtp leaves it out.
   */
  mail: SmtpSettings | null;
  notifications: NotificationConfig;
  /** A tenant's own mail server may be a private, loopback or link-local address (MAIL_ALLOW_PRIVATE). */
  mailAllowPrivate: boolean;
  portal: PortalConfig;
}

export interface BillingConfig {
  /** Start each tenant's bill run of the day in this process (several instances agree on one run per day). */
  schedulerEnabled: boolean;
  /** The UTC hour from which the day's scheduled run is started. */
  runHourUtc: number;
  /** Subscribers billed per transaction. */
  runBatchSize: number;
  /** How long a claimed run is its worker's without renewal; a dead worker's run is taken up after it. */
  runLeaseMs: number;
}

export interface AutomationConfig {
  /** Run the rules' event consumer and the overdue sweep in this process. */
  enabled: boolean;
  /** How often the consumer, the sweep and the bill scheduler look for work. */
  pollMs: number;
  /**
   * How many payable invoices a dunning sweep's query reads per page (issue 28): a pass reads a few pages per sweep,
   * and the next pass resumes where it stopped.
   */
  sweepPageSize: number;
}

export const NETWORK_DRIVERS = ['radius-sql', 'none'] as const;
export type NetworkDriverName = (typeof NETWORK_DRIVERS)[number];

/** Bounds on waiting for the database: a stuck statement or transaction answers 503 instead of hanging requests. */
export interface DatabaseTimeouts {
  /** statement_timeout: a statement running longer is cancelled (PGlite, the embedded database, ignores it). */
  statementMs: number;
  /** idle_in_transaction_session_timeout: a session idle inside a transaction this long is ended (not on PGlite). */
  idleInTransactionMs: number;
  /** How long a request waits for a pooled connection; then it answers 503 service_unavailable. */
  acquireMs: number;
}

export interface WebhookConfig {
  /** Run the delivery worker in this process (several instances may all run it). */
  workerEnabled: boolean;
  pollMs: number;
  timeoutMs: number;
  concurrency: number;
  retryDelaysS: number[];
  /** A subscription failing every attempt this long is disabled. */
  disableAfterS: number;
  allowPrivate: boolean;
  allowInsecure: boolean;
}

/** The notifications worker (issue 31): like the webhooks', plus a per-tenant send rate. */
export interface NotificationConfig {
  workerEnabled: boolean;
  pollMs: number;
  concurrency: number;
  /** Waits between attempts after a temporary SMTP failure (4xx, a timeout); once spent, the notification fails. */
  retryDelaysS: number[];
  /** Messages a tenant may send per minute (across its notifications; the rest wait their turn). */
  ratePerMinute: number;
  /** How long a claimed notification is its worker's before another instance takes it over (outlives a send). */
  leaseMs: number;
}

const DEFAULT_RETRY_DELAYS_S = [5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400];

function delays(env: Env, name: string, fallback = DEFAULT_RETRY_DELAYS_S): number[] {
  const raw = env[name]?.trim();
  if (!raw) {
    return fallback;
  }
  const parts = raw.split(',').map((part) => part.trim());
  if (parts.length > 20 || !parts.every((part) => /^\d+(\.\d+)?$/.test(part))) {
    throw new ConfigError(
      name,
      `must be a comma-separated list of at most 20 non-negative numbers, got "${raw}"`,
    );
  }
  return parts.map(Number);
}

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    reason: string,
  ) {
    super(`Invalid configuration: ${variable} ${reason}`);
  }
}

type Env = Record<string, string | undefined>;

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') {
    return fallback;
  }
  if (!/^\d+$/.test(raw.trim())) {
    throw new ConfigError(name, `must be a whole number, got "${raw}"`);
  }
  const value = Number(raw);
  if (value < min || value > max) {
    throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  }
  return value;
}

function url(env: Env, name: string, protocols: string[]): string | null {
  const raw = env[name]?.trim();
  if (!raw) {
    return null;
  }
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(name, 'is not a valid URL');
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(name, `must use ${protocols.join(' or ')}, got "${parsed.protocol}"`);
  }
  return raw;
}

function trustProxy(env: Env): TrustProxy {
  const parsed = parseTrustProxy(env.TRUST_PROXY);
  if (typeof parsed === 'object' && !Array.isArray(parsed)) {
    throw new ConfigError('TRUST_PROXY', parsed.problem);
  }
  return parsed;
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === '') {
    return fallback;
  }
  if (['true', '1', 'yes'].includes(raw)) {
    return true;
  }
  if (['false', '0', 'no'].includes(raw)) {
    return false;
  }
  throw new ConfigError(name, `must be true or false, got "${raw}"`);
}

/**
 * DATABASE_URL, or null for the embedded database, which EMBEDDED_DATABASE=false (the Docker image) refuses: a
 * container left without DATABASE_URL would otherwise run production on a single-process trial database.
 */
function databaseUrl(env: Env): string | null {
  const embeddedAllowed = boolean(env, 'EMBEDDED_DATABASE', true);
  const value = url(env, 'DATABASE_URL', ['postgres:', 'postgresql:']);
  if (value === null && !embeddedAllowed) {
    throw new ConfigError(
      'DATABASE_URL',
      'is required: EMBEDDED_DATABASE=false (the Docker image sets it) refuses the embedded database, a ' +
        'single-process PGlite meant for trials. Set DATABASE_URL=postgres://user:password@host:5432/db, or ' +
        'EMBEDDED_DATABASE=true (with a volume on DATA_DIR) for a trial.',
    );
  }
  return value;
}

/** PUBLIC_BASE_URL: an http(s) origin, optionally with a path prefix; no trailing slash in the document. */
function publicBaseUrl(env: Env): string | null {
  const value = url(env, 'PUBLIC_BASE_URL', ['http:', 'https:']);
  if (value === null) {
    return null;
  }
  const parsed = new URL(value);
  if (parsed.search || parsed.hash || parsed.username || parsed.password) {
    throw new ConfigError(
      'PUBLIC_BASE_URL',
      `must be a plain base URL without query, fragment or credentials`,
    );
  }
  return value.replace(/\/+$/, '');
}

/** HOST: an IP address (`0.0.0.0`, `::`, `127.0.0.1`) or a host name that resolves to one of this machine's. */
function host(env: Env): string {
  const value = env.HOST?.trim() || '0.0.0.0';
  const hostname =
    /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;
  if (isIP(value) === 0 && !hostname.test(value)) {
    throw new ConfigError(
      'HOST',
      `must be an IP address (0.0.0.0, ::, 127.0.0.1) or a host name, got "${value}"`,
    );
  }
  return value;
}

/** CORS_ORIGINS: comma-separated http(s) origins (scheme, host, optional port; no path), normalised as browsers send them. */
function corsOrigins(env: Env): string[] {
  const raw = env.CORS_ORIGINS?.trim();
  if (!raw) {
    return [];
  }
  return [
    ...new Set(
      raw.split(',').map((entry) => {
        const origin = entry.trim();
        let parsed: URL | null = null;
        try {
          parsed = new URL(origin);
        } catch {
          parsed = null;
        }
        const plain =
          parsed !== null &&
          ['http:', 'https:'].includes(parsed.protocol) &&
          parsed.pathname === '/' &&
          !origin.endsWith('/') &&
          !parsed.search &&
          !parsed.hash &&
          !parsed.username &&
          !parsed.password;
        if (!plain) {
          throw new ConfigError(
            'CORS_ORIGINS',
            `must be a comma-separated list of origins like https://portal.example.com (scheme, host, optional port; no path), got "${origin}"`,
          );
        }
        return parsed!.origin;
      }),
    ),
  ];
}

function networkDriver(env: Env): NetworkDriverName {
  const value = (env.NETWORK_DRIVER?.trim() || 'radius-sql') as NetworkDriverName;
  if (!NETWORK_DRIVERS.includes(value)) {
    throw new ConfigError('NETWORK_DRIVER', `must be one of ${NETWORK_DRIVERS.join(', ')}, got "${value}"`);
  }
  return value;
}

/** SMTP_URL and MAIL_FROM, both or neither; the problem never repeats SMTP_URL, which may hold a password. */
function mail(env: Env): SmtpSettings | null {
  const result = parseSmtpEnv(env);
  if ('variable' in result) {
    throw new ConfigError(result.variable, result.problem);
  }
  return result.settings;
}

export function loadConfig(env: Env = process.env): AppConfig {
  const bootstrapToken = env.API_BOOTSTRAP_TOKEN?.trim() || null;
  if (bootstrapToken !== null && bootstrapToken.length < 32) {
    throw new ConfigError('API_BOOTSTRAP_TOKEN', 'must be at least 32 characters long');
  }
  const logLevel = (env.LOG_LEVEL?.trim() || 'info') as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  }
  return {
    port: integer(env, 'PORT', 3000, 0, 65535),
    host: host(env),
    corsOrigins: corsOrigins(env),
    publicBaseUrl: publicBaseUrl(env),
    databaseUrl: databaseUrl(env),
    databasePoolMax: integer(env, 'DATABASE_POOL_MAX', 20, 1, 500),
    databaseTimeouts: {
      statementMs: integer(env, 'DATABASE_STATEMENT_TIMEOUT_MS', 30_000, 0, 3_600_000),
      idleInTransactionMs: integer(env, 'DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS', 60_000, 0, 3_600_000),
      acquireMs: integer(env, 'DATABASE_ACQUIRE_TIMEOUT_MS', 5_000, 10, 600_000),
    },
    dataDir: resolve(env.DATA_DIR?.trim() || './data'),
    redisUrl: url(env, 'REDIS_URL', ['redis:', 'rediss:']),
    bootstrapToken,
    logLevel,
    rateLimit: {
      max: integer(env, 'RATE_LIMIT_MAX', 600, 1, 10_000_000),
      windowS: integer(env, 'RATE_LIMIT_WINDOW_S', 60, 1, 86_400),
    },
    abuse: abuseConfig(env, integer),
    trustProxy: trustProxy(env),
    tokenCacheTtlMs: integer(env, 'TOKEN_CACHE_TTL_MS', 5000, 0, 60_000),
    webhooks: {
      workerEnabled: boolean(env, 'WEBHOOK_WORKER_ENABLED', true),
      pollMs: integer(env, 'WEBHOOK_POLL_MS', 1000, 10, 60_000),
      timeoutMs: integer(env, 'WEBHOOK_TIMEOUT_MS', 15_000, 100, 120_000),
      concurrency: integer(env, 'WEBHOOK_CONCURRENCY', 10, 1, 200),
      retryDelaysS: delays(env, 'WEBHOOK_RETRY_DELAYS_S'),
      disableAfterS: integer(env, 'WEBHOOK_DISABLE_AFTER_S', 5 * 86_400, 1, 365 * 86_400),
      allowPrivate: boolean(env, 'WEBHOOK_ALLOW_PRIVATE', false),
      allowInsecure: boolean(env, 'WEBHOOK_ALLOW_INSECURE', false),
    },
    provisioning: provisioningConfig(env, { integer, boolean, delays, url, networkDriver }),
    billing: {
      schedulerEnabled: boolean(env, 'BILLING_SCHEDULER_ENABLED', true),
      runHourUtc: integer(env, 'BILLING_RUN_HOUR_UTC', 2, 0, 23),
      runBatchSize: integer(env, 'BILLING_RUN_BATCH_SIZE', 500, 1, 5000),
      runLeaseMs: integer(env, 'BILLING_RUN_LEASE_MS', 60_000, 100, 3_600_000),
    },
    imports: importsConfig(env, integer, boolean),
    automation: {
      enabled: boolean(env, 'AUTOMATION_ENABLED', true),
      pollMs: integer(env, 'AUTOMATION_POLL_MS', 5000, 10, 3_600_000),
      sweepPageSize: integer(env, 'AUTOMATION_SWEEP_PAGE_SIZE', 1000, 1, 100_000),
    },
    notifications: {
      workerEnabled: boolean(env, 'NOTIFICATION_WORKER_ENABLED', true),
      pollMs: integer(env, 'NOTIFICATION_POLL_MS', 1000, 10, 60_000),
      concurrency: integer(env, 'NOTIFICATION_CONCURRENCY', 5, 1, 100),
      retryDelaysS: delays(env, 'NOTIFICATION_RETRY_DELAYS_S', [60, 300, 1800, 7200, 21600, 86400]),
      ratePerMinute: integer(env, 'NOTIFICATION_RATE_PER_MINUTE', 120, 1, 100_000),
      leaseMs: integer(env, 'NOTIFICATION_LEASE_MS', 150_000, 1_000, 3_600_000),
    },
    mail: mail(env),
    mailAllowPrivate: boolean(env, 'MAIL_ALLOW_PRIVATE', false),
    portal: portalConfig(env, integer, url, publicBaseUrl(env)),
  };
}

export const APP_CONFIG = Symbol('APP_CONFIG');
