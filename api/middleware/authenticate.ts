import type { Request, RequestHandler } from 'express';
import type { DatabasePool } from 'slonik';
import { authenticate } from '../../common/auth/apiKeys.js';
import { errors } from '../../common/errors.js';
import type { LastUse } from '../lastUse.js';
import type { RecentKeys } from '../recentKeys.js';

/**
 * A write that will reach a worker, which confirms the key again: any create, update or delete
 * that is not a dry run (however the dry run is asked for, even malformed).
 */
const isRealWrite = (req: Request) =>
  (req.method === 'POST' || req.method === 'PATCH' || req.method === 'DELETE') &&
  req.query.dry_run === undefined &&
  req.get('Dry-Run') === undefined;

/**
 * X-Service-API-Key → the institution every later step acts for (res.locals.principal). A key
 * this process confirmed in the last few seconds is taken without asking Postgres: by a real
 * write always (its worker confirms the key again), by reads and dry runs only while revocations
 * are heard (RecentKeys explains the bound).
 */
export function requireApiKey(
  pool: DatabasePool,
  recentKeys: RecentKeys,
  lastUse: LastUse,
): RequestHandler {
  return async (req, res, next) => {
    const presented = req.get('X-Service-API-Key');
    // Absent is missing; sent but empty is a key that is not valid (product.md §2).
    if (presented === undefined) throw errors.missingApiKey();
    let principal = isRealWrite(req)
      ? recentKeys.find(presented)
      : recentKeys.findForRead(presented);
    if (!principal) {
      const mark = recentKeys.mark();
      const found = await authenticate(pool, presented);
      if (found === 'expired') throw errors.apiKeyExpired();
      if (!found) throw errors.invalidApiKey();
      principal = found;
      recentKeys.remember(presented, principal, mark);
    }
    // A key remembered a moment ago may have reached its expiry since.
    if (principal.expiresAt !== null && principal.expiresAt <= Date.now()) {
      recentKeys.forget(principal.apiKeyId);
      throw errors.apiKeyExpired();
    }
    lastUse.touch(principal.apiKeyId, principal.institution.id);
    res.locals.principal = principal;
    next();
  };
}
