import type { Request, Response } from 'express';

/**
 * The rate limiter's verdict for a request no route serves (no guard runs for it): sets the rate-limit headers and
 * counts the request, or rejects with the ApiError to answer instead (abuse block, rate limit).
 */
export interface UnroutedLimiter {
  limitUnrouted(req: Request, res: Response): Promise<void>;
}

export const UNROUTED_LIMITER = Symbol('UNROUTED_LIMITER');
