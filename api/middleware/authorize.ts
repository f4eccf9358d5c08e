import type { RequestHandler } from 'express';
import {
  allows,
  levelOf,
  permissionName,
  type RequiredPermission,
} from '../../common/auth/permissions.js';
import { errors } from '../../common/errors.js';
import { pathTemplate } from '../../common/openapi/document.js';

interface PermissionedRoute {
  method: string;
  path: string;
  permission: RequiredPermission;
}

/**
 * The permission step of every /api/v1 request (trust.md §1): after authentication and before
 * the rate limit, the Idempotency-Key and the body, so a key without the route's permission gets
 * 403 for a write, its dry run and a replay alike, and nothing is queued or counted. The route is
 * the one routeLabels matched (res.locals.route); a method the path does not serve needs nothing
 * here and gets its 405 later.
 */
export function requirePermission(routes: readonly PermissionedRoute[]): RequestHandler {
  const byRoute = new Map<string, RequiredPermission>();
  for (const { method, path, permission } of routes)
    byRoute.set(`${method.toUpperCase()} /api/v1${path}`, permission);
  return (req, res, next) => {
    // Express answers HEAD with the GET route.
    const method = req.method === 'HEAD' ? 'GET' : req.method;
    const route = res.locals.route;
    const required = route === undefined ? undefined : byRoute.get(`${method} ${route}`);
    if (required === undefined) return next();
    res.locals.permission = permissionName(required);
    const { permissions } = res.locals.principal;
    if (allows(permissions, required)) return next();
    throw errors.insufficientPermissions(
      levelOf(permissions, required.group),
      required.group,
      `${method} ${pathTemplate(route!.slice('/api/v1'.length))}`,
      permissionName(required),
    );
  };
}
