import type { z } from 'zod';
import { checkRoutePermissions, permissionName } from '../auth/permissions.js';
import { apiKeysTagDescription } from './apiKeys.js';
import { auditTagDescription } from './audit.js';
import { errorEnvelope } from './errorCatalogue.js';
import { componentSchemas, type JsonSchema } from './jsonSchema.js';
import { eventsTagDescription, operationFor } from './operations.js';
import type { Needs } from './responses.js';
import { healthResponse, operatorPaths, readinessResponse } from './operator.js';
import { headerRef, sharedHeaders, sharedParameters } from './parameters.js';
import { resources } from '../resources/index.js';
import type { DocumentedRoute } from './routeDoc.js';
import { introduction } from './text.js';
import { webhooksSection } from './webhooks.js';

/** The parts of an OpenAPI 3.1 document that its readers (tests, the docs page) walk. */
export interface OpenApiDocument {
  openapi: '3.1.0';
  info: JsonSchema;
  paths: Record<string, Record<string, JsonSchema>>;
  components: {
    schemas: Record<string, JsonSchema>;
    responses: Record<string, JsonSchema>;
  } & JsonSchema;
  [key: string]: unknown;
}

/** Entries in code-point order of their names, the same on every machine. */
const byName = ([a]: [string, unknown], [b]: [string, unknown]) => (a < b ? -1 : a > b ? 1 : 0);

/** `/donors/:id` (Express) under /api/v1 → `/api/v1/donors/{id}` (OpenAPI). */
export const pathTemplate = (expressPath: string) =>
  `/api/v1${expressPath.replace(/:(\w+)/g, '{$1}')}`;

const importsTagDescription =
  'Bulk import of donors or gifts from a CSV file or JSON rows: each row judged by exactly the rules of the single-record write, written in chunks by the workers, exactly once. See docs/imports.md.';

function tags(): JsonSchema[] {
  const resourceTags = resources.map(({ text }) => ({
    name: text.tag,
    description: text.rules.split('\n\n')[0],
  }));
  const reportTags = new Map(
    resources.flatMap(({ reports = [] }) =>
      reports.map(({ text }) => [text.tag, text.tagDescription] as const),
    ),
  );
  return [
    { name: 'Institution', description: 'The institution an API key acts for.' },
    ...resourceTags,
    ...[...reportTags].map(([name, description]) => ({ name, description })),
    { name: 'Imports', description: importsTagDescription },
    { name: 'API keys', description: apiKeysTagDescription },
    { name: 'Audit', description: auditTagDescription },
    { name: 'Events', description: eventsTagDescription() },
    {
      name: 'Operations',
      description: 'For operators: liveness, readiness, metrics, this document.',
    },
  ];
}

/**
 * The OpenAPI 3.1 document of the API, derived from the route table: one operation per route,
 * request bodies from each resource's Shape, responses from each resource's response.ts, list
 * filters from each ListSpec and errors from the factories of common/errors.ts. Pure: the same
 * routes give the same document, byte for byte once serialised.
 */
export function buildOpenApiDocument(routes: readonly DocumentedRoute[]): OpenApiDocument {
  checkRoutePermissions(routes);
  const needs: Needs = { responses: new Map(), bodies: new Map(), errors: new Map() };
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const route of routes) {
    const template = pathTemplate(route.path);
    const item = (paths[template] ??= {});
    if (item[route.method]) throw new Error(`${route.method} ${template} is in the table twice`);
    item[route.method] = {
      ...operationFor(route, needs),
      'x-required-permission': permissionName(route.permission),
    };
  }

  const responseSchemas = new Map<string, z.ZodType>([
    ['Error', errorEnvelope],
    ...[...needs.responses].sort(byName),
    ['Health', healthResponse],
    ['Readiness', readinessResponse],
  ]);
  const bodies = [...needs.bodies].sort(byName);

  return {
    openapi: '3.1.0',
    info: {
      title: 'Donor and Gift Management Service',
      version: 'v1',
      summary:
        'Donors, tags, gifts and their receipts, funds, staff, award cycles, scholarships and awards.',
      description: introduction(),
      contact: { name: 'The operator of this deployment' },
    },
    // One deployment per document: the one that serves it, so its own host (production or not).
    servers: [
      {
        url: '/',
        description:
          'The deployment that serves this document, production, staging or local alike: the API is on its own host.',
        'x-internal': false,
      },
    ],
    security: [{ ApiKey: [] }],
    tags: tags(),
    paths: { ...paths, ...operatorPaths },
    webhooks: webhooksSection(),
    components: {
      securitySchemes: {
        ApiKey: {
          type: 'apiKey',
          in: 'header',
          name: 'X-Service-API-Key',
          description:
            'The institution’s API key, shown once when it is made. Every request acts on that institution, with the key’s permissions: each operation names the one it needs in `x-required-permission` (`gifts:write`; write implies read), and a key without it gets 403 `insufficient_permissions` before anything else is done. Absent: 401 `missing_api_key`; unknown, malformed or revoked: 401 `invalid_api_key`; past its `expires_at`: 401 `api_key_expired`.',
        },
        MetricsToken: {
          type: 'http',
          scheme: 'bearer',
          description: 'Only when the service is configured with METRICS_TOKEN.',
        },
      },
      parameters: sharedParameters,
      headers: sharedHeaders,
      responses: {
        ...Object.fromEntries([...needs.errors].sort(byName)),
        Error: {
          description:
            'Any error, in the one envelope. Besides the statuses an operation lists: 404 `route_not_found` for a path that names nothing, and 405 `method_not_allowed` (with `Allow`) for a method the path does not support.',
          headers: {
            'Request-Id': headerRef('RequestId'),
            Allow: headerRef('Allow'),
            'Should-Retry': headerRef('ShouldRetry'),
          },
          content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
        },
      },
      schemas: { ...componentSchemas(responseSchemas), ...Object.fromEntries(bodies) },
    },
  };
}
