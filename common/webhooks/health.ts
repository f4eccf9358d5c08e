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
 * Disables the endpoints that have had deliveries for FAILING_DAYS and delivered none of them
 * in that time: every attempt since then failed. Returns how many.
 */
export const disableFailingEndpoints = (db: CommonQueryMethods): Promise<number> =>
  disableEndpoints(
    db,
    sql.fragment`
      EXISTS (
        SELECT 1 FROM webhook_deliveries d
        WHERE d.institution_id = w.institution_id AND d.endpoint_id = w.id
          AND d.status <> 'delivered'
          AND d.created_at < now() - make_interval(days => ${FAILING_DAYS}))
      AND NOT EXISTS (
        SELECT 1 FROM webhook_deliveries d
        WHERE d.institution_id = w.institution_id AND d.endpoint_id = w.id
          AND d.status = 'delivered'
          AND d.updated_at >= now() - make_interval(days => ${FAILING_DAYS}))`,
  );
