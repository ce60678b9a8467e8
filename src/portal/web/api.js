// The API of the server that serves this page (docs/portal.md), called with the portal session's token.

const BASE = new URL('../api/v1/', document.baseURI);
const TOKEN_KEY = 'portal.token';

/** An answer of the API that is not a success: its status and envelope error (code, message, field). */
export class ApiFailure extends Error {
  constructor(status, error) {
    super(error?.message ?? `HTTP ${status}`);
    this.status = status;
    this.code = error?.code ?? 'network_error';
    this.field = error?.field ?? null;
  }
}

/** The session token lives in this tab only (sessionStorage): closing the tab forgets it. */
export const session = {
  token: () => sessionStorage.getItem(TOKEN_KEY),
  save: (token) => sessionStorage.setItem(TOKEN_KEY, token),
  clear: () => sessionStorage.removeItem(TOKEN_KEY),
};

let onExpired = () => undefined;

/** What to do when the API no longer takes the token (expired, revoked): the app goes back to sign-in. */
export function whenSessionEnds(handler) {
  onExpired = handler;
}

function urlOf(path, query) {
  const url = new URL(path.replace(/^\//, ''), BASE);
  for (const [name, value] of Object.entries(query ?? {})) {
    if (value !== undefined && value !== null) {
      url.searchParams.set(name, String(value));
    }
  }
  return url;
}

async function send(method, path, { body, query, auth = true, raw = false } = {}) {
  const headers = { Accept: raw ? 'application/pdf' : 'application/json' };
  const token = session.token();
  if (auth && token) {
    headers.Authorization = `Bearer ${token}`;
  }
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
  }
  let res;
  try {
    res = await fetch(urlOf(path, query), {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'omit',
      cache: 'no-store',
    });
  } catch {
    throw new ApiFailure(0, null);
  }
  if (res.ok && raw) {
    return res.blob();
  }
  const envelope = await res.json().catch(() => null);
  // An accepted request (202, 204) may answer no envelope at all.
  if (res.ok && (envelope?.success || res.status === 202 || res.status === 204)) {
    return envelope?.data ?? null;
  }
  if (res.status === 401 && auth && token) {
    session.clear();
    onExpired();
  }
  throw new ApiFailure(res.status, envelope?.error);
}

export const api = {
  get: (path, query) => send('GET', path, { query }),
  post: (path, body, options = {}) => send('POST', path, { body, ...options }),
  patch: (path, body) => send('PATCH', path, { body }),
  delete: (path) => send('DELETE', path),
  blob: (path) => send('GET', path, { raw: true }),
};
