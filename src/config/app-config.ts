import { resolve } from 'node:path';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Typed, validated configuration. Built once at boot from the environment. */
export interface AppConfig {
  port: number;
  databaseUrl: string | null;
  dataDir: string;
  redisUrl: string | null;
  bootstrapToken: string | null;
  logLevel: LogLevel;
  rateLimit: { max: number; windowS: number };
  abuse: { authFailuresMax: number; windowS: number; blockS: number };
  trustProxy: boolean;
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
  if (raw === undefined || raw.trim() === '') return fallback;
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(name, `must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max)
    throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

function url(env: Env, name: string, protocols: string[]): string | null {
  const raw = env[name]?.trim();
  if (!raw) return null;
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

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === '') return fallback;
  if (['true', '1', 'yes'].includes(raw)) return true;
  if (['false', '0', 'no'].includes(raw)) return false;
  throw new ConfigError(name, `must be true or false, got "${raw}"`);
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
    databaseUrl: url(env, 'DATABASE_URL', ['postgres:', 'postgresql:']),
    dataDir: resolve(env.DATA_DIR?.trim() || './data'),
    redisUrl: url(env, 'REDIS_URL', ['redis:', 'rediss:']),
    bootstrapToken,
    logLevel,
    rateLimit: {
      max: integer(env, 'RATE_LIMIT_MAX', 600, 1, 10_000_000),
      windowS: integer(env, 'RATE_LIMIT_WINDOW_S', 60, 1, 86_400),
    },
    abuse: {
      authFailuresMax: integer(env, 'ABUSE_AUTH_FAILURES_MAX', 20, 1, 1_000_000),
      windowS: integer(env, 'ABUSE_WINDOW_S', 300, 1, 86_400),
      blockS: integer(env, 'ABUSE_BLOCK_S', 900, 1, 604_800),
    },
    trustProxy: boolean(env, 'TRUST_PROXY', false),
  };
}

export const APP_CONFIG = Symbol('APP_CONFIG');
