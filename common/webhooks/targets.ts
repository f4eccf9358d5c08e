import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { presentEvent } from '../events/event.js';
import type { JsonObject } from '../json.js';
import { unseal } from '../secrets.js';
import type { DeliveryRef } from './dispatch.js';

/** What one attempt of a delivery needs: its state, its endpoint now, and its event. */
export interface DeliveryTarget {
  eventId: string;
  /** The delivery's status: only a `pending` one is sent. */
  status: string;
  endpointId: number;
  endpointStatus: string;
  url: string;
  /** The secrets that sign now: the endpoint's, and during a rotation the one it replaced. */
  secrets: string[];
  /** The event as GET /events/{id} answers it; null once it is past its retention. */
  event: JsonObject | null;
}

const targetRow = z.object({
  id: z.number(),
  event_id: z.string(),
  status: z.string(),
  endpoint_id: z.number(),
  endpoint_status: z.string(),
  url: z.string(),
  secrets: z.array(z.string()),
  e_seq: z.number().nullable(),
  e_type: z.string().nullable(),
  e_data: z.record(z.string(), z.json()).nullable(),
  e_previous_attributes: z.record(z.string(), z.json()).nullable(),
  e_request_id: z.string().nullable(),
  e_api_key_id: z.string().nullable(),
  e_created_at: z.string().nullable(),
});
type TargetRow = z.infer<typeof targetRow>;

const targetOf = (row: TargetRow): DeliveryTarget => ({
  eventId: row.event_id,
  status: row.status,
  endpointId: row.endpoint_id,
  endpointStatus: row.endpoint_status,
  url: row.url,
  secrets: row.secrets.map((secret) => unseal(secret)),
  event:
    row.e_seq === null
      ? null
      : presentEvent({
          seq: row.e_seq,
          id: row.event_id,
          type: row.e_type!,
          data: row.e_data!,
          previous_attributes: row.e_previous_attributes,
          request_id: row.e_request_id,
          api_key_id: row.e_api_key_id,
          created_at: row.e_created_at!,
        }),
});

/**
 * The targets of deliveries of one institution, read at the attempt (so a rotated secret, a
 * changed url or a disabled endpoint counts at once) in one statement for all of them: a target
 * per delivery, in order, null where the delivery is gone (with its endpoint).
 */
export async function deliveryTargets(
  db: CommonQueryMethods,
  deliveries: readonly DeliveryRef[],
): Promise<(DeliveryTarget | null)[]> {
  const institutionId = deliveries[0]?.institutionId;
  if (institutionId === undefined) return [];
  if (deliveries.some((delivery) => delivery.institutionId !== institutionId))
    throw new Error('deliveryTargets takes the deliveries of one institution');
  const rows = await db.any(sql.type(targetRow)`
    SELECT d.id, d.event_id, d.status, w.id AS endpoint_id, w.status AS endpoint_status, w.url,
           array_remove(ARRAY[w.secret, CASE WHEN w.previous_secret_expires_at > now()
                                             THEN w.previous_secret END], NULL) AS secrets,
           e.seq AS e_seq, e.type AS e_type, e.data AS e_data,
           e.previous_attributes AS e_previous_attributes, e.request_id AS e_request_id,
           e.api_key_id AS e_api_key_id, e.created_at AS e_created_at
    FROM webhook_deliveries d
    JOIN webhook_endpoints w ON w.institution_id = d.institution_id AND w.id = d.endpoint_id
    LEFT JOIN events e ON e.institution_id = d.institution_id AND e.id = d.event_id
    WHERE d.institution_id = ${institutionId}
      AND d.id = ANY(${sql.array(
        deliveries.map((delivery) => delivery.deliveryId),
        'int8',
      )})`);
  const byId = new Map(rows.map((row) => [row.id, row]));
  return deliveries.map((delivery) => {
    const row = byId.get(delivery.deliveryId);
    return row ? targetOf(row) : null;
  });
}
