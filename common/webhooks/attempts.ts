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

/** An attempt made, and what it leaves its delivery in. */
export interface AttemptOutcome {
  delivery: DeliveryRef;
  startedAt: Date;
  attempt: Attempt;
  /** `pending` while it will be retried; `delivered` or `failed` once settled. */
  status: 'pending' | 'delivered' | 'failed';
  /** When the queue sends it next; null once settled. */
  nextAttemptAt: Date | null;
}

/**
 * Records attempts of deliveries of one institution, at most one per delivery, in one
 * statement: each delivery takes its attempt's outcome as its latest, and the attempt gets its
 * history row. A delivery that is gone (deleted with its endpoint) records nothing.
 *
 * A send asked for by hand (`delivery.manual`) adds an attempt and never removes the schedule:
 * delivered, it settles the delivery; not, the delivery keeps the `next_attempt_at` its
 * automatic retries left (a retry request does not change it) and is `pending` while one is
 * due, `failed` when they were spent. Decided against the row as it is when the attempt is
 * recorded, so an automatic attempt recorded meanwhile counts.
 */
export async function recordAttempts(
  db: CommonQueryMethods,
  outcomes: readonly AttemptOutcome[],
): Promise<void> {
  const institutionId = outcomes[0]?.delivery.institutionId;
  if (institutionId === undefined) return;
  if (outcomes.some((outcome) => outcome.delivery.institutionId !== institutionId))
    throw new Error('recordAttempts takes the attempts of one institution');
  const rows = outcomes.map((outcome) => ({
    id: outcome.delivery.deliveryId,
    manual: outcome.delivery.manual === true,
    status: outcome.status,
    status_code: outcome.attempt.statusCode,
    error: outcome.attempt.error,
    duration_ms: outcome.attempt.durationMs,
    next_attempt_at: outcome.nextAttemptAt?.toISOString() ?? null,
    started_at: outcome.startedAt.toISOString(),
  }));
  await db.query(sql.unsafe`
    WITH o AS (
      SELECT * FROM jsonb_to_recordset(${sql.jsonb(rows)})
        AS o (id bigint, manual boolean, status text, status_code integer, error text,
              duration_ms integer, next_attempt_at timestamptz, started_at timestamptz)),
    updated AS (
      UPDATE webhook_deliveries d
      SET status = CASE WHEN NOT o.manual OR o.status = 'delivered' THEN o.status
                        WHEN d.next_attempt_at IS NULL THEN 'failed'
                        ELSE 'pending' END,
          next_attempt_at = CASE WHEN NOT o.manual OR o.status = 'delivered'
                                 THEN o.next_attempt_at
                                 ELSE d.next_attempt_at END,
          attempts = d.attempts + 1, last_status_code = o.status_code,
          last_error = o.error, last_duration_ms = o.duration_ms, updated_at = now()
      FROM o
      WHERE d.institution_id = ${institutionId} AND d.id = o.id
      RETURNING d.id)
    INSERT INTO webhook_delivery_attempts (institution_id, delivery_id, status_code,
                                           duration_ms, error, started_at)
    SELECT ${institutionId}, o.id, o.status_code, o.duration_ms, o.error, o.started_at
    FROM o JOIN updated USING (id)
    ORDER BY o.started_at`);
}

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
