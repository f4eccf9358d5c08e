import type { RequestHandler } from 'express';
import type { DatabasePool } from 'slonik';
import {
  checkRoutePermissions,
  requiredFor,
  type PermissionGroup,
  type RequiredPermission,
} from '../common/auth/permissions.js';
import { auditEventList } from '../common/audit/list.js';
import { errors } from '../common/errors.js';
import { eventList } from '../common/events/event.js';
import { webhookAttemptList } from '../common/webhooks/attempts.js';
import { webhookDeliveriesOfEndpoint, webhookDeliveryList } from '../common/webhooks/deliveries.js';
import { findInstitution, presentInstitution } from '../common/institutions.js';
import { updateInstitutionCommand } from '../common/institutionUpdate.js';
import type { DocumentedRoute, EndpointDoc } from '../common/openapi/routeDoc.js';
import type { ResourceDescriptor } from '../common/resources/descriptor.js';
import { csvColumns } from '../common/reports/csv.js';
import { resources } from '../common/resources/index.js';
import {
  childListHandler,
  childRetrieveHandler,
  deliveryAttemptListHandler,
  institutionReadHandler,
  listHandler,
  readHandler,
  recordReadHandler,
  reportListHandler,
  retrieveEventHandler,
  retrieveHandler,
  downloadHandler,
  writeHandler,
  type ListSettings,
} from './handlers.js';
import type { WriteGateway } from './writeGateway.js';
import { apiKeyRoutes } from './apiKeyRoutes.js';
import { importRoutes, type ImportRouteDeps } from './importRoutes.js';

export type Method = 'get' | 'post' | 'patch' | 'delete';

export interface Route {
  method: Method;
  path: string;
  handler: RequestHandler;
  /** What the route serves, for the OpenAPI document (common/openapi). */
  doc: EndpointDoc;
  /** What a key needs to use it, checked before anything else the request does. */
  permission: RequiredPermission;
  /** The body is a file the handler streams itself (POST /imports), not a JSON object. */
  upload?: true;
}

/** A handler and what it serves. */
interface Endpoint {
  handler: RequestHandler;
  doc: EndpointDoc;
}

export interface RouteDeps {
  /** The primary: writes, their checks, and anything a POST reads. */
  pool: DatabasePool;
  /** Where lists and retrievals (GET) read: DATABASE_READ_URL's pool, else the primary's. */
  readPool: DatabasePool;
  gateway: WriteGateway;
  lists: ListSettings;
  /** The limits of an import's upload. */
  imports: ImportRouteDeps['imports'];
}

/** A route of `group`: a GET needs its read, any other method its write. */
const route = (
  method: Method,
  path: string,
  endpoint: Endpoint,
  group: PermissionGroup,
): Route => ({
  method,
  path,
  ...endpoint,
  permission: requiredFor(method, group),
});

/**
 * A resource's routes: its collection (list, create), the reports under its path (before
 * `/:id`, which would otherwise take them for an id), then its records (retrieve, update,
 * delete where it has one).
 */
function resourceRoutes(resource: ResourceDescriptor, deps: RouteDeps): Route[] {
  const { pool, gateway, lists } = deps;
  const { path, commands } = resource;
  const write = (action: 'create' | 'update' | 'delete', command = commands[action]) =>
    command
      ? [
          {
            handler: writeHandler(gateway, command),
            doc: { kind: 'write', action, command, resource } satisfies EndpointDoc,
          },
        ]
      : [];
  const { list } = resource;
  const at = (
    method: Method,
    where: string,
    endpoint: Endpoint,
    group: PermissionGroup = resource.permission,
  ) => route(method, where, endpoint, group);
  return [
    ...(list
      ? [
          at('get', path, {
            handler: listHandler(pool, lists, list),
            doc: { kind: 'list', list, resource },
          }),
        ]
      : []),
    ...write('create').map((endpoint) => at('post', path, endpoint)),
    ...(resource.reports ?? []).map((report) =>
      at(
        'get',
        report.path,
        {
          handler: reportListHandler(pool, lists, report.list, csvColumns(report.item)),
          doc: { kind: 'list', list: report.list, resource, report },
        },
        report.permission,
      ),
    ),
    ...(resource.summaries ?? []).map((summary) =>
      at(
        'get',
        summary.path,
        {
          handler: institutionReadHandler(pool, summary),
          doc: { kind: 'institution-read', read: summary },
        },
        summary.permission,
      ),
    ),
    at('get', `${path}/:id`, {
      handler: retrieveHandler(pool, resource.label, resource.retrieve, resource.document),
      doc: { kind: 'retrieve', resource },
    }),
    ...write('update').map((endpoint) => at('patch', `${path}/:id`, endpoint)),
    ...write('delete').map((endpoint) => at('delete', `${path}/:id`, endpoint)),
    ...(resource.actions ?? []).map((action) =>
      at('post', `${path}/:id/${action.name}`, {
        handler: writeHandler(gateway, action.command),
        doc: { kind: 'action', action, resource },
      }),
    ),
    ...(resource.children ?? []).flatMap((child) => [
      at('get', `${path}/:id/${child.name}`, {
        handler: childListHandler(pool, lists, child),
        doc: { kind: 'child-list', child, resource },
      }),
      at('post', `${path}/:id/${child.name}`, {
        handler: writeHandler(gateway, child.create),
        doc: { kind: 'child-create', child, resource },
      }),
      at('get', `${path}/:id/${child.name}/:${child.param}`, {
        handler: childRetrieveHandler(pool, child),
        doc: { kind: 'child-retrieve', child, resource },
      }),
    ]),
    ...(resource.downloads ?? []).map((download) =>
      at('get', `${path}/:id/${download.name}`, {
        handler: downloadHandler(pool, resource.label, download),
        doc: { kind: 'record-download', download, resource },
      }),
    ),
    ...(resource.reads ?? []).map((read) =>
      at('get', `${path}/:id/${read.name}`, {
        handler: recordReadHandler(pool, resource.label, read),
        doc: { kind: 'record-read', read, resource },
      }),
    ),
    ...(resource.listedUnder ?? []).map((listed) =>
      at('get', `${listed.parentPath}/:id/${listed.name}`, {
        handler: childListHandler(pool, lists, listed),
        doc: { kind: 'listed-under', listed, resource },
      }),
    ),
    ...(resource.nestedActions ?? []).map((action) =>
      at('post', `${path}/:id/${action.under}/:${action.param}/${action.name}`, {
        handler: writeHandler(gateway, action.command),
        doc: { kind: 'nested-action', action, resource },
      }),
    ),
  ];
}

/** The events (read-only: every write makes its own). */
const eventRoutes = ({ pool, lists }: RouteDeps): Route[] => [
  route(
    'get',
    '/events',
    {
      handler: listHandler(pool, lists, eventList),
      doc: { kind: 'event-list', list: eventList },
    },
    'events',
  ),
  route(
    'get',
    '/events/:id',
    {
      handler: retrieveEventHandler(pool),
      doc: { kind: 'event-retrieve' },
    },
    'events',
  ),
];

/** What became of the events sent to a webhook endpoint (the worker makes deliveries). */
const webhookDeliveryRoutes = ({ pool, lists }: RouteDeps): Route[] => [
  route(
    'get',
    '/webhook-endpoints/:id/deliveries',
    {
      handler: childListHandler(pool, lists, webhookDeliveriesOfEndpoint),
      doc: { kind: 'webhook-delivery-list', list: webhookDeliveryList },
    },
    'webhooks',
  ),
  route(
    'get',
    '/webhook-endpoints/:id/deliveries/:delivery_id/attempts',
    {
      handler: deliveryAttemptListHandler(pool, lists),
      doc: { kind: 'webhook-attempt-list', list: webhookAttemptList },
    },
    'webhooks',
  ),
];

/**
 * The API at a glance: the institution, every resource's routes, then the events. Paths are
 * under /api/v1.
 */
export function apiRoutes(deps: RouteDeps): Route[] {
  // The one place that routes reads: every GET takes its handler from the same table built on
  // the read pool. Writes and dry runs, and what a POST reads, stay on the primary.
  const routes = routesOn(deps);
  checkRoutePermissions(routes);
  if (deps.readPool === deps.pool) return routes;
  const reading = routesOn({ ...deps, pool: deps.readPool });
  return routes.map((route, index) => (route.method === 'get' ? reading[index]! : route));
}

/** The route table, every handler on `deps.pool`. */
function routesOn(deps: RouteDeps): Route[] {
  const institution: Endpoint = {
    handler: readHandler(async (res) => {
      const row = await findInstitution(deps.pool, res.locals.principal.institution.id);
      if (!row) throw errors.invalidApiKey();
      return presentInstitution(row);
    }),
    doc: { kind: 'institution' },
  };
  return [
    route('get', '/institution', institution, 'institution'),
    route(
      'patch',
      '/institution',
      {
        handler: writeHandler(deps.gateway, updateInstitutionCommand),
        doc: { kind: 'institution-update' },
      },
      'institution',
    ),
    ...resources.flatMap((resource) => resourceRoutes(resource, deps)),
    ...webhookDeliveryRoutes(deps),
    ...apiKeyRoutes(deps).map((entry) => ({
      ...entry,
      permission: requiredFor(entry.method, 'api_keys'),
    })),
    ...importRoutes(deps).map((entry) => ({
      ...entry,
      permission: requiredFor(entry.method, 'imports'),
    })),
    ...eventRoutes(deps),
    route(
      'get',
      '/audit-events',
      {
        handler: listHandler(deps.pool, deps.lists, auditEventList),
        doc: { kind: 'audit-event-list' },
      },
      'audit',
    ),
  ];
}

/**
 * The table alone, for the OpenAPI document (npm run openapi, GET /api/v1/openapi.json): its
 * handlers are built but never called, so they get dependencies that refuse any use.
 */
export function routeTable(): DocumentedRoute[] {
  const unusable = new Proxy(
    {},
    {
      get() {
        throw new Error('routeTable() is for documentation: its handlers cannot run');
      },
    },
  );
  const deps = {
    pool: unusable,
    readPool: unusable,
    gateway: unusable,
    lists: unusable,
    imports: unusable,
  } as RouteDeps;
  return apiRoutes(deps).map(({ method, path, doc, permission }) => ({
    method,
    path,
    doc,
    permission,
  }));
}
