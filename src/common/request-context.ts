import { AsyncLocalStorage } from 'node:async_hooks';
import type { EntityManager } from 'typeorm';

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

/** Set by the idempotency interceptor; TransactionRunner calls `claim` inside the request's transaction. */
export interface IdempotencyClaim {
  claim(manager: EntityManager): Promise<void>;
  claimed: boolean;
}

export interface RequestContext {
  requestId: string;
  auth?: AuthContext;
  idempotency?: IdempotencyClaim;
  /** Set where no token acts (the CLI); when present it names the actor of the events written. */
  actor?: Actor;
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
    const store = storage.getStore();
    if (store?.actor) return store.actor;
    return store?.auth ? { type: 'token', id: store.auth.tokenId } : { type: 'system', id: null };
  },
};
