type Env = Record<string, string | undefined>;
type ReadInteger = (env: Env, name: string, fallback: number, min: number, max: number) => number;
type ReadUrl = (env: Env, name: string, protocols: string[]) => string | null;

/** Subscriber-scoped access (docs/portal.md). */
export interface PortalConfig {
  /**
   * The page an invite link opens (`?invite=<code>` is appended): PORTAL_URL, else this server's own portal under
   * PUBLIC_BASE_URL (`<PUBLIC_BASE_URL>/portal/`); null when neither is set: invites carry the code alone.
   */
  url: string | null;
  inviteTtlS: number;
  sessionTtlS: number;
  /** Sign-in attempts per IP in one window. */
  signInMaxPerIp: number;
  signInWindowS: number;
  /** How long an emailed sign-in code signs in, and how many a normalised email may be sent per window. */
  codeTtlS: number;
  codeMaxPerEmail: number;
  codeWindowS: number;
}

/** The portal's settings (docs/portal.md), read by app-config's own checked readers. */
export function portalConfig(
  env: Env,
  integer: ReadInteger,
  url: ReadUrl,
  publicBaseUrl: string | null,
): PortalConfig {
  return {
    url: url(env, 'PORTAL_URL', ['http:', 'https:']) ?? (publicBaseUrl ? `${publicBaseUrl}/portal/` : null),
    inviteTtlS: integer(env, 'PORTAL_INVITE_TTL_S', 7 * 86_400, 60, 90 * 86_400),
    sessionTtlS: integer(env, 'PORTAL_SESSION_TTL_S', 12 * 3600, 60, 30 * 86_400),
    signInMaxPerIp: integer(env, 'PORTAL_SIGN_IN_MAX_PER_IP', 30, 1, 100_000),
    signInWindowS: integer(env, 'PORTAL_SIGN_IN_WINDOW_S', 900, 1, 86_400),
    codeTtlS: integer(env, 'PORTAL_CODE_TTL_S', 600, 60, 86_400),
    codeMaxPerEmail: integer(env, 'PORTAL_CODE_MAX_PER_EMAIL', 5, 1, 1000),
    codeWindowS: integer(env, 'PORTAL_CODE_WINDOW_S', 900, 1, 86_400),
  };
}
