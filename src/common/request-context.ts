import { AsyncLocalStorage } from 'node:async_hooks';
import type { EntityManager } from 'typeorm';
import type { SqlParams } from '../database/sql-params';

export interface Actor {
  /** automation: a rule acting on its own (id: the rule), docs/automation.md. */
  /** subscriber: a portal session acting for its subscriber (id: the subscriber), docs/portal.md. */
  type: 'token' | 'system' | 'cli' | 'automation' | 'subscriber';
  id: string | null;
}

/** The scope an automation rule's changes are written under: the event log names the rule as their actor. */
export function automationScope(rule: string): WriteScope {
  return { requestId: null, actor: { type: 'automation', id: rule } };
}

/**
 * What a write carries into its transaction, passed to TransactionRunner as an argument: the request it belongs to,
 * who acts (the events it writes name both), and the idempotency key to claim with the effect, if any.
 */
export interface WriteScope {
  requestId: string | null;
  actor: Actor;
  idempotency?: IdempotencyClaim;
}

/** The authenticated caller, as a handler receives it (`@Auth()`): also the scope of the writes it makes. */
export interface AuthContext extends WriteScope {
  tokenId: string;
  /** The tenant the request acts for (X-Tenant-ID, or the token's own). */
  tenantId: string;
  tokenTenantId: string;
  scopes: string[];
  /** Set for a portal session token (tokenId is then the session's id): the one subscriber it may act for. */
  portal?: { subscriberId: string };
}

/** The scope of work no request asked for (workers, boot). */
export const SYSTEM_SCOPE: WriteScope = { requestId: null, actor: { type: 'system', id: null } };

/**
 * Set by the idempotency interceptor. TransactionRunner calls `claim` as the first statement of the request's
 * transaction and `complete` with the transaction's result as its last, so the key, the effect and the stored answer
 * commit together or not at all.
 */
export interface IdempotencyClaim {
  claim(manager: EntityManager): Promise<void>;
  complete(manager: EntityManager, answer: unknown): Promise<void>;
  /**
   * For a write that is one statement (TransactionRunner.runStatement): the claim, storing `answer` with the key, as
   * CTEs of that statement, so the claim, the effect and the answer are one round trip.
   */
  inStatement(answer: unknown): ClaimInStatement;
  claimed: boolean;
  /** The answer stored with the key, once `complete` ran. */
  stored?: { answer: unknown };
}

/**
 * The claim as part of the effect's own statement: `ctes` (their parameters added to the statement's `params`)
 * follow WITH, `check` goes in the statement's final WHERE and aborts the whole statement when the key is held.
 */
export interface ClaimInStatement {
  ctes(params: SqlParams): { sql: string; check: string };
}

export interface RequestContext {
  requestId: string;
  auth?: Pick<AuthContext, 'tokenId' | 'tenantId' | 'tokenTenantId' | 'scopes' | 'portal'>;
  idempotency?: IdempotencyClaim;
  /** The write's If-Match, set by EtagInterceptor; services check it under the row lock (assertIfMatch). */
  ifMatch?: IfMatchPrecondition;
  /**
   * How the caller is shown the record it writes, when it is not shown all of it (a portal session, docs/portal.md):
   * assertIfMatch compares If-Match with the tag of that view, the one the caller was given.
   */
  recordView?: (representation: unknown) => unknown;
  /** The acting tenant's test clock's time, when it has one (set by the auth guard); Clock answers it. */
  frozenAt?: Date;
}

export interface IfMatchPrecondition {
  /** The entity tags listed, or '*' for any current representation. */
  tags: string[] | '*';
  /** Set once a service compared it with the locked record. */
  evaluated: boolean;
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
};
