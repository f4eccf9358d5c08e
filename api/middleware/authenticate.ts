import type { RequestHandler } from 'express';
import type { DatabasePool } from 'slonik';
import { authenticate } from '../../common/auth/apiKeys.js';
import { errors } from '../../common/errors.js';

/** X-Service-API-Key → the institution every later step acts for (res.locals.principal). */
export function requireApiKey(pool: DatabasePool): RequestHandler {
  return async (req, res, next) => {
    const presented = req.get('X-Service-API-Key');
    // Absent is missing; sent but empty is a key that is not valid (product.md §2).
    if (presented === undefined) throw errors.missingApiKey();
    const principal = await authenticate(pool, presented);
    if (!principal) throw errors.invalidApiKey();
    res.locals.principal = principal;
    next();
  };
}
