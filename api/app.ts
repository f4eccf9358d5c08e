import express, { type Express, type RequestHandler } from 'express';
import { sql, type DatabasePool } from 'slonik';
import type { AuditLog } from '../common/audit/log.js';
import { errors } from '../common/errors.js';
import type { Logger } from '../common/logger.js';
import type { ApiMetrics } from '../common/metrics.js';
import { buildOpenApiDocument } from '../common/openapi/document.js';
import type { Redis } from '../common/redis.js';
import type { WorkerPresence } from '../common/workerPresence.js';
import { adminDashboard, type AdminDashboardOptions } from './admin.js';
import { docsRouter, onlyGet } from './docs.js';
import { LastUse } from './lastUse.js';
import { requireApiKey } from './middleware/authenticate.js';
import { auditTrail } from './middleware/audit.js';
import { requirePermission } from './middleware/authorize.js';
import type { RecentKeys } from './recentKeys.js';
import { errorHandler } from './middleware/errorHandler.js';
import { rateLimit } from './middleware/rateLimit.js';
import { requestId } from './middleware/requestId.js';
import { requestLog } from './middleware/requestLog.js';
import { hasBody } from './requestParsing.js';
import type { ListSettings } from './handlers.js';
import { apiRoutes, type Method, type Route, type RouteDeps } from './routes.js';
import type { WriteGateway } from './writeGateway.js';
import './locals.js';

export interface AppDeps {
  pool: DatabasePool;
  /** Lists and retrievals read here (api/routes.ts): a replica's pool, or `pool` itself. */
  readPool: DatabasePool;
  /** Keys confirmed in the last seconds, shared with the gateway (which forgets revoked ones). */
  recentKeys: RecentKeys;
  redis: Redis;
  /** Whether a worker is running, for /ready. */
  workers: WorkerPresence;
  gateway: WriteGateway;
  logger: Logger;
  lists: ListSettings;
  metrics: ApiMetrics;
  /** When set, GET /metrics requires `Authorization: Bearer <token>`. */
  metricsToken: string | null;
  /** Requests per second per API key; 0 turns the limit off. */
  rateLimitPerSecond: number;
  /** The limits of an import's upload (POST /imports). */
  imports: RouteDeps['imports'];
  /** Where the audit rows of /api/v1 requests go (trust.md §3); null only in bench:trust's baseline. */
  audit: AuditLog | null;
  /** The queue dashboard at /admin/queues; absent (404) unless ADMIN_TOKEN is configured. */
  admin?: AdminDashboardOptions | null;
}

const BODY_LIMIT = '100kb';

/** The `object` of each collection's records, for the audit rows of refused writes on one. */
function objectsOfCollections(routes: readonly Route[]): ReadonlyMap<string, string> {
  const objects = new Map<string, string>([
    ['/api-keys', 'api_key'],
    ['/imports', 'import'],
  ]);
  for (const { doc } of routes)
    if ('resource' in doc) objects.set(doc.resource.path, doc.resource.object);
  return objects;
}

/**
 * POST and PATCH carry a JSON object. One rule for a missing body, whatever the route and the
 * headers: 400 `invalid_json` (an empty object `{}` is a body). A body of another type is 415.
 */
const jsonBody: RequestHandler[] = [
  (req, _res, next) => {
    if (!hasBody(req)) throw errors.emptyBody();
    if (!req.is('application/json')) throw errors.unsupportedMediaType();
    next();
  },
  express.json({
    limit: BODY_LIMIT,
    strict: false,
    type: 'application/json',
    // A chunked body can still turn out empty.
    verify: (_req, _res, raw) => {
      if (raw.length === 0) throw errors.emptyBody();
    },
  }),
];

/** Names the route pattern a request matched, for metrics. */
const label =
  (route: string): RequestHandler =>
  (_req, res, next) => {
    // Paths are registered in route-table order, so the first pattern that matches is the one
    // whose handler runs (`/scholarships/awarded-students` before `/scholarships/:id`).
    res.locals.route ??= route;
    next();
  };

/** Whether a request for the fixed `path` would also match `pattern` (`:name` segments only). */
function patternMatches(pattern: string, path: string): boolean {
  const wanted = pattern.split('/');
  const given = path.split('/');
  return (
    wanted.length === given.length &&
    wanted.every((segment, index) => segment.startsWith(':') || segment === given[index])
  );
}

/**
 * Labels a request under /api/v1 with the first route pattern (in route-table order) that
 * matches it. A request for a fixed path exactly as the table writes it (`POST /gifts`) is found
 * in a map; any other (an id in the path, another letter case, a trailing slash) walks a layer
 * per pattern, as every request once did: the router's fifty-odd layers were a visible share
 * of a write's CPU in the API.
 */
function routeLabels(paths: readonly string[]): RequestHandler {
  const exact = new Map<string, string>();
  const patterns = express.Router();
  paths.forEach((path, index) => {
    patterns.all(path, label(`/api/v1${path}`));
    // A fixed path that an earlier pattern also matches keeps that pattern's label.
    const shadowed = paths.slice(0, index).some((earlier) => patternMatches(earlier, path));
    if (!path.includes(':') && !shadowed) exact.set(path, `/api/v1${path}`);
  });
  return (req, res, next) => {
    const route = exact.get(req.path);
    if (route === undefined) return patterns(req, res, next);
    res.locals.route ??= route;
    next();
  };
}

/** Request count and latency by route pattern (never by raw path, which would explode labels). */
function measureRequests(metrics: ApiMetrics): RequestHandler {
  return (req, res, next) => {
    const stop = metrics.httpDuration.startTimer();
    res.on('finish', () => {
      const route = res.locals.route ?? 'unmatched';
      const labels = { method: req.method, route, status: String(res.statusCode) };
      stop(labels);
      metrics.httpRequests.inc(labels);
    });
    next();
  };
}

/** Builds the HTTP application without listening, so tests and main.ts share it. */
export function createApp(deps: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(requestId);
  app.use(requestLog(deps.logger));
  app.use(measureRequests(deps.metrics));
  app.all(['/metrics', '/health', '/ready'], (req, res, next) => label(req.path)(req, res, next));
  app.get('/metrics', async (req, res) => {
    if (deps.metricsToken && req.get('Authorization') !== `Bearer ${deps.metricsToken}`) {
      throw errors.invalidApiKey();
    }
    res.type(deps.metrics.registry.contentType).send(await deps.metrics.registry.metrics());
  });
  app.get('/health', (_req, res) => {
    res.json({ status: 'ok' });
  });
  // Ready to serve writes: Postgres and Redis answer, and a worker is running to commit them.
  app.get('/ready', async (_req, res) => {
    const [database, redis, worker] = await Promise.all([
      deps.pool.oneFirst(sql.unsafe`SELECT 1`).then(
        () => true,
        () => false,
      ),
      deps.redis.ping().then(
        () => true,
        () => false,
      ),
      deps.workers.presentAnywhere(),
    ]);
    const ready = database && redis && worker;
    res
      .status(ready ? 200 : 503)
      .json({ status: ready ? 'ready' : 'unavailable', database, redis, worker });
  });

  app.all(['/metrics', '/health', '/ready'], onlyGet);

  // Outside /api/v1 and without an API key: the docs page, and the operators' queue dashboard.
  app.use(docsRouter());
  if (deps.admin) app.use(adminDashboard(deps.admin));

  const routes = apiRoutes(deps);
  // The OpenAPI document of the route table needs no API key (product.md §5).
  const openApi = JSON.stringify(buildOpenApiDocument(routes));
  app.get('/api/v1/openapi.json', label('/api/v1/openapi.json'), (_req, res) => {
    res.type('application/json').send(openApi);
  });
  app.all('/api/v1/openapi.json', onlyGet);

  const api = express.Router();
  api.use(routeLabels([...new Set(routes.map((route) => route.path))]));
  if (deps.audit) api.use(auditTrail(deps.audit, objectsOfCollections(routes)));
  api.use(
    requireApiKey(deps.pool, deps.recentKeys, new LastUse(deps.pool, deps.logger)),
    requirePermission(routes),
    rateLimit(deps.rateLimitPerSecond),
  );
  // Each path's handlers, then its 405, before the next path: a fixed path such as
  // /scholarships/awarded-students answers 405 itself rather than falling to /scholarships/:id.
  const methodsByPath = new Map<string, Method[]>();
  for (const route of routes) {
    methodsByPath.set(route.path, [...(methodsByPath.get(route.path) ?? []), route.method]);
  }
  for (const [path, methods] of methodsByPath) {
    for (const route of routes.filter((candidate) => candidate.path === path)) {
      const body =
        (route.method === 'post' || route.method === 'patch') && !route.upload ? jsonBody : [];
      api[route.method](route.path, ...body, route.handler);
    }
    api.all(path, (req) => {
      throw errors.methodNotAllowed(
        req.method,
        methods.map((method) => method.toUpperCase()),
      );
    });
  }
  app.use('/api/v1', api);

  app.use((req) => {
    throw errors.routeNotFound(req.method, req.path);
  });
  app.use(errorHandler(deps.logger));
  return app;
}
