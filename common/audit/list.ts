import { sql } from 'slonik';
import { z } from 'zod';
import { errors } from '../errors.js';
import type { JsonObject } from '../json.js';
import { instantFilter, type FilterSpec, type ListSpec } from '../pagination/listSpec.js';
import { timestamp } from '../resources/responseFields.js';

const auditRow = z.object({
  id: z.number(),
  occurred_at: z.string(),
  api_key_id: z.string().nullable(),
  request_id: z.string(),
  method: z.string(),
  route: z.string(),
  status: z.number(),
  object_type: z.string().nullable(),
  object_id: z.string().nullable(),
  dry_run: z.boolean(),
  replayed: z.boolean(),
  ip: z.string().nullable(),
});
type AuditRow = z.infer<typeof auditRow>;

/** An audit event (trust.md §3). */
export const auditEventResponse = z.object({
  object: z.literal('audit_event'),
  id: z.number().int().positive(),
  occurred_at: timestamp,
  api_key_id: z
    .string()
    .nullable()
    .describe('The key that made the request; for a 401, the key id it presented.'),
  request_id: z.string().describe('The `Request-Id` of the request.'),
  method: z.string(),
  route: z
    .string()
    .describe(
      'The route’s template, `/api/v1/donors/{id}`: never the values in the path or query.',
    ),
  status: z.number().int().describe('The HTTP status answered.'),
  object_type: z.string().nullable().describe('The `object` of the record concerned, when one is.'),
  object_id: z.string().nullable().describe('The record’s id, when one is concerned.'),
  dry_run: z.boolean(),
  replayed: z.boolean().describe('The answer was the replay of a stored one (`Idempotency-Key`).'),
  ip: z.string().nullable().describe('The client’s address, as the API saw it.'),
});

const present = (row: AuditRow): JsonObject => ({
  object: 'audit_event',
  id: row.id,
  occurred_at: row.occurred_at,
  api_key_id: row.api_key_id,
  request_id: row.request_id,
  method: row.method,
  route: row.route,
  status: row.status,
  object_type: row.object_type,
  object_id: row.object_id,
  dry_run: row.dry_run,
  replayed: row.replayed,
  ip: row.ip,
});

const textFilter = (column: string, pattern: RegExp, example: string): FilterSpec => ({
  description: { kind: 'pattern', pattern: pattern.source, example },
  parse(param, raw) {
    if (!pattern.test(raw))
      throw errors.invalidParameter(param, `${param} must look like ${example}.`);
    return raw;
  },
  condition: (value) => sql.fragment`${sql.identifier([column])} = ${value}`,
});

const statusFilter: FilterSpec = {
  description: { kind: 'pattern', pattern: '^[1-5][0-9]{2}$', example: '403' },
  parse(param, raw) {
    if (!/^[1-5][0-9]{2}$/.test(raw))
      throw errors.invalidParameter(param, `${param} must be an HTTP status, such as 403.`);
    return raw;
  },
  condition: (value) => sql.fragment`status = ${Number(value)}`,
};

/** GET /audit-events: newest first, by id. */
export const auditEventList: ListSpec<AuditRow> = {
  endpoint: '/api/v1/audit-events',
  from: sql.fragment`audit_events`,
  institutionColumn: sql.fragment`institution_id`,
  key: sql.fragment`id`,
  columns: sql.fragment`id, occurred_at, api_key_id, request_id, method, route, status,
    object_type, object_id, dry_run, replayed, host(ip) AS ip`,
  row: auditRow,
  keyOf: (row) => row.id,
  present,
  filters: {
    api_key_id: textFilter('api_key_id', /^key_[0-9a-f]{16}$/, 'key_3f9c2a1b0d4e5f67'),
    object_type: textFilter('object_type', /^[a-z_]{1,40}$/, 'donor'),
    object_id: textFilter('object_id', /^[A-Za-z0-9_]{1,40}$/, '42'),
    occurred_from: instantFilter(sql.fragment`occurred_at`, '>='),
    occurred_to: instantFilter(sql.fragment`occurred_at`, '<='),
    status: statusFilter,
  },
  needs: { object_id: 'object_type' },
};
