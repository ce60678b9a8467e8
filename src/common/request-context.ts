import { AsyncLocalStorage } from 'node:async_hooks';

export interface Actor {
  type: 'token' | 'system' | 'cli';
  id: string | null;
}

export interface AuthContext {
  tokenId: string;
  /** The tenant the request acts for (X-Tenant-ID, or the token's own). */
  tenantId: string;
  tokenTenantId: string;
  scopes: string[];
}

export interface RequestContext {
  requestId: string;
  auth?: AuthContext;
}

const storage = new AsyncLocalStorage<RequestContext>();

export const requestContext = {
  run<T>(context: RequestContext, fn: () => T): T {
    return storage.run(context, fn);
  },
  get(): RequestContext | undefined {
    return storage.getStore();
  },
  requestId(): string | null {
    return storage.getStore()?.requestId ?? null;
  },
  actor(): Actor {
    const auth = storage.getStore()?.auth;
    return auth ? { type: 'token', id: auth.tokenId } : { type: 'system', id: null };
  },
};
