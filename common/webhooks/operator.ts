/**
 * The operator's webhook commands (cli/admin.ts `webhooks …`): they look across institutions,
 * which no API key can.
 */
import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { failureStreak } from './health.js';

const failingRow = z.object({
  institution_id: z.number(),
  institution: z.string(),
  endpoint_id: z.number(),
  url: z.string(),
  status: z.string(),
  consecutive_failures: z.number(),
  last_error: z.string().nullable(),
  last_failed_at: z.string(),
});
export type FailingEndpoint = z.infer<typeof failingRow>;

/**
 * Endpoints with a failed attempt in the last `hours`, most consecutive failures first:
 * consecutive counts the failed attempts since the endpoint's last delivery (failureStreak, the
 * streak that disables an endpoint once it spans FAILING_DAYS).
 */
export function failingEndpoints(pool: DatabasePool, hours: number, limit = 100) {
  return pool.any(sql.type(failingRow)`
    SELECT w.institution_id, i.name AS institution, w.id AS endpoint_id, w.url, w.status,
           streak.failures AS consecutive_failures, streak.last_error, streak.last_failed_at
    FROM webhook_endpoints w
    JOIN institutions i ON i.id = w.institution_id
    CROSS JOIN ${failureStreak}
    WHERE streak.last_failed_at > now() - make_interval(hours => ${hours})
    ORDER BY streak.failures DESC, streak.last_failed_at DESC
    LIMIT ${limit}`);
}

const owner = z.object({ institution_id: z.number(), status: z.string().nullable() });

const replayed = z.object({
  id: z.number(),
  institution_id: z.number(),
  endpoint_id: z.number(),
  event_id: z.string(),
  event_type: z.string(),
  status: z.string(),
});

/**
 * Queues a fresh send of one event to one endpoint, both of the same institution: the
 * delivery (made now, or the one the event already had there) becomes pending and one more
 * send is requested, which the worker queues as it queues an API retry. Throws a message for
 * the operator when the event or the endpoint is missing, they belong to different
 * institutions, or the endpoint is disabled.
 */
export async function replayEvent(pool: DatabasePool, eventId: string, endpointId: number) {
  return pool.transaction(async (tx) => {
    const event = await tx.maybeOne(sql.type(owner.extend({ type: z.string() }))`
      SELECT institution_id, type, NULL AS status FROM events WHERE id = ${eventId}`);
    if (!event) throw new Error(`No event with id ${eventId} (it may be past its retention)`);
    const endpoint = await tx.maybeOne(sql.type(owner)`
      SELECT institution_id, status FROM webhook_endpoints WHERE id = ${endpointId}`);
    if (!endpoint) throw new Error(`No webhook endpoint with id ${endpointId}`);
    if (endpoint.institution_id !== event.institution_id)
      throw new Error(
        `Event ${eventId} is of institution ${event.institution_id} and webhook endpoint ${endpointId} of institution ${endpoint.institution_id}: an event goes only to its own institution's endpoints`,
      );
    if (endpoint.status !== 'enabled')
      throw new Error(`Webhook endpoint ${endpointId} is disabled: enable it first`);
    return tx.one(sql.type(replayed)`
      INSERT INTO webhook_deliveries (institution_id, endpoint_id, event_id, event_type,
                                      next_attempt_at, retries_requested)
      -- Made here, it has no retries scheduled: a send that fails leaves it failed.
      VALUES (${event.institution_id}, ${endpointId}, ${eventId}, ${event.type}, NULL, 1)
      ON CONFLICT (institution_id, endpoint_id, event_id) DO UPDATE
        SET status = 'pending', updated_at = now(),
            retries_requested = webhook_deliveries.retries_requested + 1
      RETURNING id, institution_id, endpoint_id, event_id, event_type, status`);
  });
}
