import { sql } from 'slonik';
import { lockClause, pathId, type Command } from '../../commands/command.js';
import { errors } from '../../errors.js';
import { validateBody } from '../../validation/validateBody.js';
import { deliveryColumns, deliveryRow, presentDelivery } from '../../webhooks/deliveries.js';
import { webhookEndpointIdentity } from './schema.js';

/**
 * POST /webhook-endpoints/{id}/deliveries/{delivery_id}/retry: the delivery becomes pending, and
 * one more send of it is requested. Its `next_attempt_at` stays its schedule's (null when the
 * schedule is spent): a send that fails goes back to it (recordAttempts). The send is queued by the worker's webhook
 * side once this write has committed (it counts `retries_requested`), so a dry run or a replay
 * sends nothing and a committed retry sends exactly once.
 */
export const retryWebhookDelivery: Command = {
  name: `${webhookEndpointIdentity.name}.retry_delivery`,
  async execute(ctx, request) {
    const endpointId = pathId(request);
    const deliveryId = pathId({ params: { id: request.params.delivery_id ?? '' }, body: {} });
    // Another institution's endpoint or delivery is as absent as a missing one.
    const existing =
      endpointId !== null && deliveryId !== null
        ? await ctx.db.maybeOne(sql.type(deliveryRow)`
            SELECT ${deliveryColumns} FROM webhook_deliveries
            WHERE institution_id = ${ctx.institution.id} AND endpoint_id = ${endpointId}
              AND id = ${deliveryId}
            ${lockClause(ctx)}`)
        : null;
    if (!existing) throw errors.notFound('webhook delivery');
    const validation = validateBody({}, request.body);
    if (validation.errors.length) throw errors.validationFailed(validation.errors);
    const row = ctx.dryRun
      ? { ...existing, status: 'pending' as const, updated_at: ctx.now }
      : await ctx.db.one(sql.type(deliveryRow)`
          UPDATE webhook_deliveries
          SET status = 'pending', updated_at = now(), retries_requested = retries_requested + 1
          WHERE institution_id = ${ctx.institution.id} AND id = ${existing.id}
          RETURNING ${deliveryColumns}`);
    return { status: 200, body: presentDelivery(row) };
  },
};
