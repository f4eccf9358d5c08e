import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';

/** A delivery to make: its row's key. */
export interface DeliveryRef {
  institutionId: number;
  deliveryId: number;
  /** A send asked for by hand (a retry through the API, a replay): set on its job only. */
  manual?: boolean;
}

const dispatched = z.object({
  batch_size: z.number(),
  deliveries: z.array(z.object({ institution_id: z.number(), id: z.number() })),
});

/**
 * Turns committed events into deliveries: one row per (event, enabled endpoint whose
 * `enabled_events` match it), made in the transaction that moves the cursor past the events, so
 * each event is dispatched once. Events are taken in the order of their transactions, only up
 * to the oldest transaction still running (pg_snapshot_xmin): every event before it has
 * committed or never will, so none can appear behind the cursor later. Concurrent dispatchers
 * skip the locked cursor rather than wait for it.
 */
export async function dispatchEvents(
  pool: DatabasePool,
  limit = 500,
): Promise<{
  batchSize: number;
  deliveries: DeliveryRef[];
}> {
  return pool.transaction(async (tx) => {
    const cursor = await tx.maybeOne(sql.type(z.object({ locked: z.boolean() }))`
      SELECT true AS locked FROM webhook_dispatch_cursor FOR UPDATE SKIP LOCKED`);
    if (!cursor) return { batchSize: 0, deliveries: [] };
    const result = await tx.one(sql.type(dispatched)`
      WITH batch AS (
        SELECT e.institution_id, e.id, e.type, e.object_type, e.xact, e.seq, e.created_at
        FROM events e, webhook_dispatch_cursor c
        WHERE (e.xact, e.seq) > (c.xact, c.seq)
          AND e.xact < pg_snapshot_xmin(pg_current_snapshot())
        ORDER BY e.xact, e.seq
        LIMIT ${limit}),
      made AS (
        INSERT INTO webhook_deliveries (institution_id, endpoint_id, event_id, event_type,
                                        next_attempt_at)
        SELECT b.institution_id, w.id, b.id, b.type, now()
        FROM batch b
        JOIN webhook_endpoints w
          ON w.institution_id = b.institution_id AND w.status = 'enabled'
         -- An endpoint receives the events written since it was made, not older ones the
         -- dispatcher had yet to reach.
         AND w.created_at <= b.created_at
         AND ('*' = ANY (w.enabled_events) OR b.type = ANY (w.enabled_events)
              OR b.object_type || '.*' = ANY (w.enabled_events))
        ON CONFLICT DO NOTHING
        RETURNING institution_id, id),
      last AS (SELECT xact, seq FROM batch ORDER BY xact DESC, seq DESC LIMIT 1),
      moved AS (
        UPDATE webhook_dispatch_cursor c SET xact = last.xact, seq = last.seq FROM last
        RETURNING 1)
      SELECT (SELECT count(*)::int FROM batch) AS batch_size,
             (SELECT count(*) FROM moved) AS moved,
             coalesce((SELECT json_agg(made) FROM made), '[]') AS deliveries`);
    return {
      batchSize: result.batch_size,
      deliveries: result.deliveries.map((row) => ({
        institutionId: row.institution_id,
        deliveryId: row.id,
      })),
    };
  });
}

/**
 * Deliveries never attempted a while after they were made: their jobs were lost (a worker died
 * between the dispatch's commit and queueing them). Queueing again is harmless: a delivery's
 * job id is its own.
 */
export const orphanedDeliveries = (pool: DatabasePool): Promise<readonly DeliveryRef[]> =>
  pool.any(sql.type(z.object({ institutionId: z.number(), deliveryId: z.number() }))`
    SELECT institution_id AS "institutionId", id AS "deliveryId" FROM webhook_deliveries
    WHERE status = 'pending' AND attempts = 0 AND created_at < now() - interval '1 minute'
    LIMIT 1000`);

/**
 * Seconds since the oldest committed event the dispatcher has not passed was written (0 when it
 * is up to date), in transaction order from the cursor. Unlike dispatchEvents it counts the
 * events held back behind a transaction still running: they are waiting too.
 */
export const outboxLagSeconds = (pool: DatabasePool): Promise<number> =>
  pool.oneFirst(sql.type(z.object({ lag: z.number() }))`
    SELECT coalesce((
      SELECT extract(epoch FROM now() - e.created_at)::float8
      FROM events e, webhook_dispatch_cursor c
      WHERE (e.xact, e.seq) > (c.xact, c.seq)
      ORDER BY e.xact, e.seq
      LIMIT 1), 0) AS lag`);
