import { z } from 'zod';
import { errorSchemaFor, exampleOf, type ErrorCode } from './errorCatalogue.js';
import { schemaRef, type JsonSchema } from './jsonSchema.js';
import { requestIdHeader } from './parameters.js';

export const healthResponse = z.object({ status: z.literal('ok') });

export const readinessResponse = z.object({
  status: z.enum(['ready', 'unavailable']),
  database: z.boolean().describe('Whether PostgreSQL answered.'),
  redis: z.boolean().describe('Whether Redis answered.'),
  worker: z
    .boolean()
    .describe(
      'Whether a worker is running (one has sent its heartbeat in the last 5 s). Without one, writes answer 503 at once and queue nothing.',
    ),
});

const json = (schema: JsonSchema) => ({ 'application/json': { schema } });

const unauthorized = (codes: ErrorCode[]) => ({
  description: 'The credentials are missing or wrong.',
  headers: requestIdHeader,
  content: {
    'application/json': {
      schema: errorSchemaFor(codes),
      examples: Object.fromEntries(codes.map((code) => [code, { value: exampleOf(code) }])),
    },
  },
});

/** The paths outside the route table: liveness, readiness, metrics and this document. */
export const operatorPaths: Record<string, Record<string, JsonSchema>> = {
  '/api/v1/openapi.json': {
    get: {
      operationId: 'getOpenApiDocument',
      summary: 'This OpenAPI document',
      description: 'The OpenAPI 3.1 description of the API. Needs no API key.',
      tags: ['Operations'],
      security: [],
      responses: {
        '200': {
          description: 'The document.',
          headers: requestIdHeader,
          content: json({
            type: 'object',
            properties: {
              openapi: { type: 'string', const: '3.1.0' },
              info: { type: 'object' },
              paths: { type: 'object' },
            },
            required: ['openapi', 'info', 'paths'],
          }),
        },
      },
    },
  },
  '/health': {
    get: {
      operationId: 'getHealth',
      summary: 'Liveness',
      description: 'Answers while the process runs; checks no dependency. Needs no API key.',
      tags: ['Operations'],
      security: [],
      responses: {
        '200': {
          description: 'The process is up.',
          headers: requestIdHeader,
          content: json(schemaRef('Health')),
        },
      },
    },
  },
  '/ready': {
    get: {
      operationId: 'getReadiness',
      summary: 'Readiness',
      description:
        'Whether the service can take writes, for a load balancer or orchestrator: PostgreSQL and Redis answer, and a worker is running. Needs no API key.',
      tags: ['Operations'],
      security: [],
      responses: {
        '200': {
          description: 'Both dependencies answer and a worker is running.',
          headers: requestIdHeader,
          content: json(schemaRef('Readiness')),
        },
        '503': {
          description: 'A dependency does not answer, or no worker is running.',
          headers: requestIdHeader,
          content: json(schemaRef('Readiness')),
        },
      },
    },
  },
  '/metrics': {
    get: {
      operationId: 'getMetrics',
      summary: 'Prometheus metrics',
      description:
        'Request counts and latencies by route pattern, queue and process metrics, in the Prometheus text format. For operators: when the service is configured with `METRICS_TOKEN`, send `Authorization: Bearer <token>`; otherwise it is open.',
      tags: ['Operations'],
      security: [{}, { MetricsToken: [] }],
      responses: {
        '200': {
          description: 'The metrics.',
          headers: requestIdHeader,
          content: { 'text/plain': { schema: { type: 'string' } } },
        },
        '401': unauthorized(['invalid_api_key']),
      },
    },
  },
};
