import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { JsonObject } from '../json.js';
import {
  enumFilter,
  idFilter,
  instantFilter,
  type FilterSpec,
  type ListSpec,
} from '../pagination/listSpec.js';
import { errors } from '../errors.js';
import { timestamp } from '../resources/responseFields.js';
import { eventColumns, eventRow, presentEvent, type EventRow } from './stored.js';
import { eventTypes } from './types.js';

export { presentEvent, type EventRow };

/** `evt_` and 32 hex digits (the migration's default): nothing else can name an event. */
const EVENT_ID = /^evt_[0-9a-f]{32}$/;

// A type two writes make (`recurring_gift.updated`: its own PATCH, a donor's death) is named once.
const typeNames = [...new Set(eventTypes.map((eventType) => eventType.type))];
const objectTypes = [...new Set(eventTypes.map((eventType) => eventType.objectType))];

/** The event object of integration.md §1. */
export const eventResponse = z.object({
  id: z.string().regex(EVENT_ID).describe('The event’s id: opaque, unguessable and unique.'),
  object: z.literal('event'),
  type: z
    .enum(typeNames)
    .describe('What happened, `<object>.<what happened>`: see the Events tag for every type.'),
  created_at: timestamp.describe('When the write committed.'),
  request_id: z
    .string()
    .nullable()
    .describe(
      'The `Request-Id` of the request that made the write (its first delivery). Null for a change the service made on its own, with no request: a webhook endpoint it disabled (`webhook_endpoint.updated` with `previous_attributes` `{"status": "enabled"}`) after a 410 Gone answer or 5 days of failed deliveries.',
    ),
  api_key_id: z
    .string()
    .nullable()
    .describe(
      'The public id of the API key that made the write. Null, as `request_id` is, for a change the service made on its own.',
    ),
  data: z.object({
    object: z
      .record(z.string(), z.unknown())
      .describe(
        'The record as the write answered it, which is as `GET` returned it just after the write, except for the figures only `GET` of one donor or fund computes from other records (`giving`, `totals`): they change without a write of the record. For a delete, the deletion object `{"id", "object", "deleted": true}`.',
      ),
    previous_attributes: z
      .record(z.string(), z.unknown())
      .optional()
      .describe(
        'Updates only (`<object>.updated`, and `award_cycle.status_changed`, which is an update of `status`): the old values of the fields the update changed (`updated_at` aside). Absent on every other type.',
      ),
  }),
});

/**
 * `type`: one type, or every type of one object (`gift.*`). A type's first part is always its
 * object's type (common/events/types.ts), so the wildcard is a filter on that.
 */
const typeFilter: FilterSpec = {
  description: { kind: 'pattern', pattern: '^[a-z_]+\\.([a-z_]+|\\*)$', example: 'gift.*' },
  parse(param, raw) {
    const objectType = raw.endsWith('.*') ? raw.slice(0, -2) : null;
    if (objectType !== null ? objectTypes.includes(objectType) : typeNames.includes(raw))
      return raw;
    throw errors.invalidParameter(
      param,
      `${param} must be an event type (such as gift.created) or an object's types (such as gift.*); the types are listed in the OpenAPI document.`,
    );
  },
  condition: (value) =>
    value.endsWith('.*')
      ? sql.fragment`object_type = ${value.slice(0, -2)}`
      : sql.fragment`type = ${value}`,
};

/** GET /events: the institution's events, newest first. */
export const eventList: ListSpec<EventRow> = {
  endpoint: '/api/v1/events',
  from: sql.fragment`events`,
  institutionColumn: sql.fragment`institution_id`,
  key: sql.fragment`seq`,
  columns: eventColumns,
  row: eventRow,
  keyOf: (row) => row.seq,
  present: presentEvent,
  filters: {
    type: typeFilter,
    object_type: enumFilter(sql.fragment`object_type`, objectTypes),
    object_id: idFilter(sql.fragment`object_id`),
    created_from: instantFilter(sql.fragment`created_at`, '>='),
    created_to: instantFilter(sql.fragment`created_at`, '<='),
  },
  // An id names a record only together with its type.
  needs: { object_id: 'object_type' },
};

/** GET /events/{id}: an event of the institution, or null (another's is as absent as none). */
export async function retrieveEvent(
  db: CommonQueryMethods,
  institutionId: number,
  id: string,
): Promise<JsonObject | null> {
  if (!EVENT_ID.test(id)) return null;
  const row = await db.maybeOne(sql.type(eventRow)`
    SELECT ${eventColumns} FROM events WHERE institution_id = ${institutionId} AND id = ${id}`);
  return row && presentEvent(row);
}
