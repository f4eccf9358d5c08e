import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { enqueueManualRetries, type DeliveryQueue } from './queue.js';

const retryRequests = z.object({
  institutionId: z.number(),
  deliveryId: z.number(),
  queued: z.number(),
  requested: z.number(),
});

/**
 * Queues the sends that committed retry writes asked for (retryWebhookDelivery), then records
 * them as queued. Queued before recorded: a worker that dies between the two queues them again
 * under the same job ids, which sends once.
 */
export async function queueRequestedRetries(pool: DatabasePool, queue: DeliveryQueue) {
  const due = await pool.any(sql.type(retryRequests)`
    SELECT institution_id AS "institutionId", id AS "deliveryId", retries_queued AS queued,
           retries_requested AS requested
    FROM webhook_deliveries WHERE retries_queued < retries_requested
    LIMIT 500`);
  if (!due.length) return;
  // One send per request: two retries asked for between two looks here send twice.
  await enqueueManualRetries(
    queue,
    due.flatMap(({ institutionId, deliveryId, queued, requested }) =>
      Array.from({ length: requested - queued }, (_, index) => ({
        institutionId,
        deliveryId,
        request: queued + index + 1,
      })),
    ),
  );
  await pool.query(sql.unsafe`
    UPDATE webhook_deliveries d SET retries_queued = greatest(d.retries_queued, q.request)
    FROM unnest(${sql.array(
      due.map((row) => row.institutionId),
      'int8',
    )}::bigint[], ${sql.array(
      due.map((row) => row.deliveryId),
      'int8',
    )}::bigint[], ${sql.array(
      due.map((row) => row.requested),
      'int4',
    )}::int[]) AS q (institution_id, id, request)
    WHERE d.institution_id = q.institution_id AND d.id = q.id`);
}
