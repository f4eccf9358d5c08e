import { sql } from 'slonik';
import { z } from 'zod';
import type { JsonObject } from '../json.js';

// A stored event and its presentation, apart from event.ts: they need no list of event types,
// so a resource's own read (a donor's export) may use them without an import cycle.

export const eventRow = z.object({
  seq: z.number(),
  id: z.string(),
  type: z.string(),
  data: z.record(z.string(), z.json()),
  previous_attributes: z.record(z.string(), z.json()).nullable(),
  request_id: z.string().nullable(),
  api_key_id: z.string().nullable(),
  created_at: z.string(),
});
export type EventRow = z.infer<typeof eventRow>;

export const eventColumns = sql.fragment`
  seq, id, type, data, previous_attributes, request_id, api_key_id, created_at`;

/** The event as GET /events/{id} answers it, and as webhooks deliver it. */
export function presentEvent(row: EventRow): JsonObject {
  return {
    id: row.id,
    object: 'event',
    type: row.type,
    created_at: row.created_at,
    request_id: row.request_id,
    api_key_id: row.api_key_id,
    data: {
      object: row.data as JsonObject,
      ...(row.previous_attributes
        ? { previous_attributes: row.previous_attributes as JsonObject }
        : {}),
    },
  };
}
