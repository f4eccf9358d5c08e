import type { z } from 'zod';
import {
  describeCodes,
  errorSchemaFor,
  exampleOf,
  hasShouldRetry,
  statusOf,
  type ErrorCode,
} from './errorCatalogue.js';
import type { JsonSchema } from './jsonSchema.js';
import { headerRef, rateLimitHeaders, requestIdHeader } from './parameters.js';

/*
 * The responses every kind of operation shares: the errors a request may meet before its route
 * runs, an error response per status and set of codes, and a success. Operations of the route
 * table (operations.ts) and those written out by hand (imports, API keys, the audit log) build
 * on these alone.
 */

/** What the operations of the route table need in components.schemas. */
export interface Needs {
  /** Response schemas, converted together from zod. */
  responses: Map<string, z.ZodType>;
  /** Request bodies, generated from Shapes. */
  bodies: Map<string, JsonSchema>;
  /** Error responses, one per status and set of codes (many operations share one). */
  errors: Map<string, JsonSchema>;
}

export const authentication: ErrorCode[] = [
  'missing_api_key',
  'invalid_api_key',
  'api_key_expired',
  'insufficient_permissions',
  'rate_limited',
];
export const ourSide: ErrorCode[] = ['internal_error', 'service_unavailable'];

export const pascal = (text: string) =>
  text.replace(/(^|[-_ ])(\w)/g, (_match, _separator: string, letter: string) =>
    letter.toUpperCase(),
  );
/** The error responses of one operation, grouped by status, each with an example per code. */
export function errorResponses(
  codes: readonly ErrorCode[],
  needs: Needs,
): Record<string, JsonSchema> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes)
    byStatus.set(statusOf(code), [...(byStatus.get(statusOf(code)) ?? []), code]);
  const responses: Record<string, JsonSchema> = {};
  for (const [status, group] of [...byStatus].sort(([a], [b]) => a - b)) {
    const name = group.map(pascal).join('Or');
    responses[String(status)] = { $ref: `#/components/responses/${name}` };
    if (needs.errors.has(name)) continue;
    needs.errors.set(name, {
      description: describeCodes(group),
      headers: {
        ...requestIdHeader,
        // A 401 comes before the key is known and a 403 before its budget is counted; a 5xx says
        // nothing of it.
        ...(status >= 400 && status < 500 && status !== 401 && status !== 403
          ? rateLimitHeaders
          : {}),
        ...(status === 503 || status === 429 ? { 'Retry-After': headerRef('RetryAfter') } : {}),
        ...(group.some(hasShouldRetry) ? { 'Should-Retry': headerRef('ShouldRetry') } : {}),
      },
      content: {
        'application/json': {
          schema: errorSchemaFor(group),
          examples: Object.fromEntries(group.map((code) => [code, { value: exampleOf(code) }])),
        },
      },
    });
  }
  return responses;
}

/** Any error; what a request that matches no operation gets (404 route_not_found, 405, 401). */
export const anyError = { default: { $ref: '#/components/responses/Error' } };

export const success = (
  description: string,
  schema: JsonSchema,
  headers: Record<string, JsonSchema> = {},
): JsonSchema => ({
  description,
  headers: { ...requestIdHeader, ...rateLimitHeaders, ...headers },
  content: { 'application/json': { schema } },
});

/**
 * The errors of a write with a JSON body: `query`, what its query may lack besides; `extra`, what
 * its route may answer besides (a missing record, its conflicts).
 */
export const bodyWriteErrors = ({
  query = [],
  idempotency = ['invalid_idempotency_key'],
  extra = [],
}: {
  query?: readonly ErrorCode[];
  idempotency?: readonly ErrorCode[];
  extra?: readonly ErrorCode[];
} = {}): ErrorCode[] => [
  'invalid_json',
  'invalid_parameter',
  ...query,
  ...idempotency,
  ...authentication,
  'idempotency_key_in_flight',
  ...extra,
  'payload_too_large',
  'unsupported_media_type',
  'validation_failed',
  'idempotency_key_request_mismatch',
  ...ourSide,
  'write_timeout',
];

/** The errors of a POST with a body to one record's sub-path (an action, a child's create). */
export const recordWriteErrors = (conflicts: readonly ErrorCode[]): ErrorCode[] =>
  bodyWriteErrors({ extra: ['resource_not_found', ...conflicts] });
