import type { RequestHandler, Response } from 'express';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { errors } from '../../common/errors.js';

/**
 * At most `perSecond` requests per API key and second (product.md §2: 429 `rate_limited` with
 * `Retry-After`). Counted in this process's memory: no round trip per request and nothing lost
 * when Redis is down; with several API processes behind a balancer a key may get up to that
 * many times the limit. Runs after authentication, so it counts keys, never guesses.
 */
export function rateLimit(perSecond: number): RequestHandler {
  if (perSecond === 0) return (_req, _res, next) => next();
  const limiter = new RateLimiterMemory({ points: perSecond, duration: 1 });
  /** What is left of the key's budget, on every answer it gets (429s included). */
  const tell = (res: Response, state: RateLimiterRes) =>
    res.set({
      'RateLimit-Limit': String(perSecond),
      'RateLimit-Remaining': String(Math.max(0, state.remainingPoints)),
      'RateLimit-Reset': String(Math.max(1, Math.ceil(state.msBeforeNext / 1000))),
    });
  return async (_req, res, next) => {
    try {
      tell(res, await limiter.consume(res.locals.principal.apiKeyId));
    } catch (refusal) {
      if (!(refusal instanceof RateLimiterRes)) throw refusal;
      tell(res, refusal);
      throw errors.rateLimited(Math.max(1, Math.ceil(refusal.msBeforeNext / 1000)));
    }
    next();
  };
}
