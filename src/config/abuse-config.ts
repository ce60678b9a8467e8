type Env = Record<string, string | undefined>;
type ReadInteger = (env: Env, name: string, fallback: number, min: number, max: number) => number;

export interface AbuseConfig {
  authFailuresMax: number;
  windowS: number;
  blockS: number;
}

/** The abuse threshold: failed authentications from one IP in a window that block it, and for how long. */
export function abuseConfig(env: Env, integer: ReadInteger): AbuseConfig {
  return {
    authFailuresMax: integer(env, 'ABUSE_AUTH_FAILURES_MAX', 20, 1, 1_000_000),
    windowS: integer(env, 'ABUSE_WINDOW_S', 300, 1, 86_400),
    blockS: integer(env, 'ABUSE_BLOCK_S', 900, 1, 604_800),
  };
}
