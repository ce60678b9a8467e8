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

/**
 * Set by the idempotency interceptor. TransactionRunner calls `claim` as the first statement of the request's
 * transaction and `complete` with the transaction's result as its last, so the key, the effect and the stored answer
 * commit together or not at all.
 */
export interface IdempotencyClaim {
  claim(manager: EntityManager): Promise<void>;
  complete(manager: EntityManager, answer: unknown): Promise<void>;
  claimed: boolean;
  /** The answer stored with the key, once `complete` ran. */
  stored?: { answer: unknown };
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
