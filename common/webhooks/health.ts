import { sql, type CommonQueryMethods, type FragmentSqlToken } from 'slonik';
import { z } from 'zod';
import { insertEvents } from '../events/outbox.js';
import { eventTypeOf } from '../events/types.js';
import { updateWebhookEndpoint } from '../resources/webhookEndpoints/commands.js';
import { presentWebhookEndpoint } from '../resources/webhookEndpoints/present.js';
import { webhookEndpointRow, webhookEndpointTable } from '../resources/webhookEndpoints/schema.js';
import { columnsOf } from '../resources/table.js';

/** integration.md §2: an endpoint whose deliveries all failed for this long is disabled. */
export const FAILING_DAYS = 5;

const disabledRow = webhookEndpointRow.extend({ institution_id: z.number() });

/**
 * Disables the enabled endpoints `which` names (a condition on `webhook_endpoints w`) and
 * records for each the `webhook_endpoint.updated` event an update to `disabled` through the API
 * would have made, but with no request and no API key. Returns how many.
 */
export async function disableEndpoints(
  db: CommonQueryMethods,
  which: FragmentSqlToken,
): Promise<number> {
  // Its own transaction, or a savepoint of the caller's: the events commit with the change.
  return db.transaction(async (tx) => {
    const rows = await tx.any(sql.type(disabledRow)`
    UPDATE webhook_endpoints w SET status = 'disabled', updated_at = now()
    WHERE w.status = 'enabled' AND ${which}
    RETURNING ${columnsOf(webhookEndpointTable)}, institution_id`);
    const { type, objectType } = eventTypeOf(updateWebhookEndpoint.name);
    await insertEvents(
      tx,
      rows.map(({ institution_id, ...row }) => ({
        institutionId: institution_id,
        type,
        objectType,
        objectId: row.id,
        data: presentWebhookEndpoint(row),
        previousAttributes: { status: 'enabled' },
        requestId: null,
        apiKeyId: null,
      })),
    );
    return rows.length;
  });
}

/** 410 Gone: the receiver says the endpoint is no more (integration.md §2). */
export const disableGoneEndpoint = (
  db: CommonQueryMethods,
  institutionId: number,
  endpointId: number,
) =>
  disableEndpoints(db, sql.fragment`w.institution_id = ${institutionId} AND w.id = ${endpointId}`);

/**
 * The endpoint `w`'s current streak of failures: its failed attempts since its last successful
 * one (all of them, when it never had one), as `streak (failures, first_failed_at,
 * last_failed_at, last_error)`; no failures, no row. The one definition of "consecutive
 * failures", read by the disabling below and by the operator's `webhooks failing`.
 */
export const failureStreak = sql.fragment`
  LATERAL (
    SELECT count(*)::int AS failures, min(a.started_at) AS first_failed_at,
           max(a.started_at) AS last_failed_at,
           (array_agg(a.error ORDER BY a.started_at DESC, a.id DESC))[1] AS last_error
    FROM webhook_deliveries d
    JOIN webhook_delivery_attempts a ON a.institution_id = d.institution_id AND a.delivery_id = d.id
    WHERE d.institution_id = w.institution_id AND d.endpoint_id = w.id
      AND a.started_at > coalesce((
        SELECT max(ok.started_at)
        FROM webhook_deliveries od
        JOIN webhook_delivery_attempts ok
          ON ok.institution_id = od.institution_id AND ok.delivery_id = od.id
        WHERE od.institution_id = w.institution_id AND od.endpoint_id = w.id
          AND ok.error IS NULL), '-infinity')
    HAVING count(*) > 0) streak`;

/**
 * Disables the endpoints whose every attempt failed for FAILING_DAYS: a streak of failures,
 * none delivered in between, from its first to its latest at least that long. One old failure
 * of an endpoint quiet since is no such streak. Returns how many.
 */
export const disableFailingEndpoints = (db: CommonQueryMethods): Promise<number> =>
  disableEndpoints(
    db,
    sql.fragment`
      EXISTS (
        SELECT 1 FROM ${failureStreak}
        WHERE streak.last_failed_at - streak.first_failed_at
              >= make_interval(days => ${FAILING_DAYS}))`,
  );
