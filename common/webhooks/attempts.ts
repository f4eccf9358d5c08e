import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { JsonObject } from '../json.js';
import type { ListSpec } from '../pagination/listSpec.js';
import { recordIdOf, timestamp } from '../resources/responseFields.js';
import type { DeliveryRef } from './dispatch.js';
import type { Attempt } from './send.js';

/** One attempt of one delivery: what the receiver answered, or why nothing came back. */
export const webhookDeliveryAttemptResponse = z.object({
  id: recordIdOf('attempt'),
  object: z.literal('webhook_delivery_attempt'),
  status_code: z
    .number()
    .int()
    .nullable()
    .describe('The HTTP status answered; null when none came back (a timeout, a refused address).'),
  duration_ms: z.number().int().min(0).describe('From the start of the attempt to its answer.'),
  error: z
    .string()
    .nullable()
    .describe('Why the attempt was not a delivery; null for a 2xx (a delivery).'),
  started_at: timestamp.describe('When the attempt began.'),
});

const attemptRow = z.object({
  id: z.number(),
  status_code: z.number().nullable(),
  duration_ms: z.number(),
  error: z.string().nullable(),
  started_at: z.string(),
});
type AttemptRow = z.infer<typeof attemptRow>;

const presentAttempt = (row: AttemptRow): JsonObject => ({
  id: row.id,
  object: 'webhook_delivery_attempt',
  status_code: row.status_code,
  duration_ms: row.duration_ms,
  error: row.error,
  started_at: row.started_at,
});

/** Records one attempt; run it in the transaction that records it on its delivery. */
export const recordAttempt = (
  db: CommonQueryMethods,
  delivery: DeliveryRef,
  startedAt: Date,
  attempt: Attempt,
) =>
  db.query(sql.unsafe`
    INSERT INTO webhook_delivery_attempts (institution_id, delivery_id, status_code,
                                           duration_ms, error, started_at)
    VALUES (${delivery.institutionId}, ${delivery.deliveryId}, ${attempt.statusCode},
            ${attempt.durationMs}, ${attempt.error}, ${startedAt.toISOString()})`);

/** GET /webhook-endpoints/{id}/deliveries/{delivery_id}/attempts: newest first. */
export const webhookAttemptList: ListSpec<AttemptRow> = {
  endpoint: '/api/v1/webhook-endpoints/:id/deliveries/:delivery_id/attempts',
  from: sql.fragment`webhook_delivery_attempts`,
  institutionColumn: sql.fragment`institution_id`,
  key: sql.fragment`id`,
  columns: sql.fragment`id, status_code, duration_ms, error, started_at`,
  row: attemptRow,
  keyOf: (row) => row.id,
  present: presentAttempt,
  filters: {},
};

/** Whether the delivery is one of this endpoint's, of this institution. */
export const deliveryExists = (
  db: CommonQueryMethods,
  institutionId: number,
  endpointId: number,
  deliveryId: number,
) =>
  db.exists(sql.unsafe`
    SELECT 1 FROM webhook_deliveries
    WHERE institution_id = ${institutionId} AND endpoint_id = ${endpointId} AND id = ${deliveryId}`);

/**
 * Deletes, in batches, the attempts and the settled deliveries older than the events'
 * retention (their events are gone too); returns how many rows went.
 */
export async function pruneDeliveries(
  db: CommonQueryMethods,
  retentionDays: number,
  batchSize = 5_000,
): Promise<number> {
  let total = 0;
  for (const statement of [
    sql.unsafe`
      DELETE FROM webhook_delivery_attempts WHERE ctid IN (
        SELECT ctid FROM webhook_delivery_attempts
        WHERE started_at < now() - make_interval(days => ${retentionDays}) LIMIT ${batchSize})`,
    sql.unsafe`
      DELETE FROM webhook_deliveries WHERE ctid IN (
        SELECT ctid FROM webhook_deliveries
        WHERE status <> 'pending' AND created_at < now() - make_interval(days => ${retentionDays})
        LIMIT ${batchSize})`,
  ])
    for (;;) {
      const result = await db.query(statement);
      total += result.rowCount;
      if (result.rowCount < batchSize) break;
    }
  return total;
}
