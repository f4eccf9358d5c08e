import { sql, type CommonQueryMethods, type FragmentSqlToken } from 'slonik';
import type { JsonObject } from '../json.js';
import { eventTypeOf } from './types.js';

/** What a write's event knows before the write runs: who wrote, and what kind of write. */
export interface WriteEvent {
  type: string;
  objectType: string;
  requestId: string;
  apiKeyId: string;
}

export const writeEventOf = (
  command: string,
  job: { requestId: string; apiKeyId: string },
  previousAttributes: JsonObject | null = null,
): WriteEvent => {
  const { type, objectType } = eventTypeOf(command, previousAttributes);
  return { type, objectType, requestId: job.requestId, apiKeyId: job.apiKeyId };
};

/**
 * The old values of the fields an update changed, by comparing the record as presented before
 * and after it. `updated_at` changes on every update, so it says nothing and is left out.
 */
export function previousAttributes(before: JsonObject, after: JsonObject): JsonObject {
  const previous: JsonObject = {};
  for (const [name, value] of Object.entries(before)) {
    if (name === 'updated_at') continue;
    if (JSON.stringify(value) !== JSON.stringify(after[name])) previous[name] = value;
  }
  return previous;
}

/** Where an event's record comes from, in the statement that inserts it. */
export interface EventSource {
  objectId: FragmentSqlToken;
  data: FragmentSqlToken;
  previousAttributes: JsonObject | null;
  /** The FROM and WHERE of the insert: the rows of the write that commits with it. */
  from: FragmentSqlToken;
}

/**
 * The outbox insert (integration.md §1): one data-modifying step that joins the statement
 * committing the write's receipt, so the event commits exactly when the write does and costs no
 * round trip of its own.
 */
export const insertEvent = (
  institutionId: number,
  event: WriteEvent,
  source: EventSource,
): FragmentSqlToken => sql.fragment`
  INSERT INTO events (institution_id, type, object_type, object_id, data, previous_attributes,
                      request_id, api_key_id)
  SELECT ${institutionId}, ${event.type}, ${event.objectType}, ${source.objectId}, ${source.data},
         ${source.previousAttributes ? sql.json(source.previousAttributes) : null}::json,
         ${event.requestId}, ${event.apiKeyId}
  ${source.from}`;

/**
 * An event written beside the statement of its write rather than inside it: an import chunk's
 * records, an import completed, a change the service made on its own (an endpoint it disabled:
 * `requestId` and `apiKeyId` null).
 */
export interface OutboxEvent {
  institutionId: number;
  type: string;
  objectType: string;
  objectId: number;
  /** The record as GET returns it after the change. */
  data: JsonObject;
  previousAttributes: JsonObject | null;
  requestId: string | null;
  apiKeyId: string | null;
}

/**
 * The outbox insert of many events in one statement. Run it in the transaction of the change,
 * so the events commit exactly when the change does. (`data` stays json, not jsonb, so a
 * record keeps its keys in the order GET answers them.)
 */
export async function insertEvents(
  db: CommonQueryMethods,
  events: readonly OutboxEvent[],
): Promise<void> {
  if (!events.length) return;
  const rows = events.map((event) => ({
    institution_id: event.institutionId,
    type: event.type,
    object_type: event.objectType,
    object_id: event.objectId,
    data: event.data,
    previous_attributes: event.previousAttributes,
    request_id: event.requestId,
    api_key_id: event.apiKeyId,
  }));
  await db.query(sql.unsafe`
    INSERT INTO events (institution_id, type, object_type, object_id, data, previous_attributes,
                        request_id, api_key_id)
    SELECT e.institution_id, e.type, e.object_type, e.object_id, e.data, e.previous_attributes,
           e.request_id, e.api_key_id
    FROM json_to_recordset(${sql.json(rows)}) AS e(institution_id bigint, type text,
      object_type text, object_id bigint, data json, previous_attributes json, request_id text,
      api_key_id text)`);
}
