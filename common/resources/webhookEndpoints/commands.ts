import { sql } from 'slonik';
import { deleted, previewCreated, type Command } from '../../commands/command.js';
import {
  apiPath,
  fieldsOf,
  findTarget,
  judgeRecord,
  updateCommand,
  type WritableResource,
} from '../../commands/resourceCommands.js';
import { errors } from '../../errors.js';
import { seal } from '../../secrets.js';
import { validateBody } from '../../validation/validateBody.js';
import { columnsOf, insertRow } from '../table.js';
import { readOnlyOf } from '../responseFields.js';
import { presentWebhookEndpoint, presentWithSecret } from './present.js';
import { webhookEndpointResponse } from './response.js';
import {
  newSecret,
  webhookEndpointDefaults,
  webhookEndpointIdentity,
  webhookEndpointShape,
  webhookEndpointTable,
  type WebhookEndpointFields,
  type WebhookEndpointRow,
} from './schema.js';

/** How long the secret a rotation replaced keeps signing (integration.md §2). */
export const PREVIOUS_SECRET_HOURS = 24;

const endpointsResource: WritableResource<WebhookEndpointRow, WebhookEndpointFields> = {
  identity: webhookEndpointIdentity,
  table: webhookEndpointTable,
  shape: webhookEndpointShape,
  defaults: webhookEndpointDefaults,
  readOnly: readOnlyOf(webhookEndpointResponse, webhookEndpointShape),
  // An update keeps the secret; a create makes one (store sees no existing row), sealed: the
  // row never holds it in clear (common/secrets.ts).
  store: (record, existing) => ({
    ...fieldsOf<Omit<WebhookEndpointFields, 'secret'>>({ shape: webhookEndpointShape }, record),
    secret: existing?.secret ?? seal(newSecret()),
  }),
  present: presentWebhookEndpoint,
};

/**
 * The generic create, but answering the secret: it is shown here and on rotation only, so the
 * event (which GET /events and every webhook carry) has the record without it.
 */
export const createWebhookEndpoint: Command = {
  name: `${webhookEndpointIdentity.name}.create`,
  async execute(ctx, request) {
    const check = judgeRecord(ctx, endpointsResource, request.body, null);
    if (check.validation.errors.length) throw errors.validationFailed(check.validation.errors);
    const fields = endpointsResource.store!(check.record, null);
    const row = ctx.dryRun
      ? (previewCreated(ctx, fields) as WebhookEndpointRow)
      : await insertRow(ctx.db, webhookEndpointTable, ctx.institution.id, fields);
    return {
      status: 201,
      body: presentWithSecret(row),
      location: `${apiPath(webhookEndpointIdentity)}/${row.id}`,
      eventObject: presentWebhookEndpoint(row),
      secretFields: ['secret'],
    };
  },
};

export const updateWebhookEndpoint = updateCommand(endpointsResource);

export const deleteWebhookEndpoint: Command = {
  name: `${webhookEndpointIdentity.name}.delete`,
  async execute(ctx, request) {
    const existing = await findTarget(ctx, request, endpointsResource);
    // Its deliveries go with it (ON DELETE CASCADE); queued ones then find nothing to send.
    if (!ctx.dryRun)
      await ctx.db.query(sql.unsafe`
        DELETE FROM webhook_endpoints
        WHERE institution_id = ${ctx.institution.id} AND id = ${existing.id}`);
    return deleted(webhookEndpointIdentity.object, existing.id);
  },
};

/**
 * A new secret, answered once; the one it replaces keeps signing for PREVIOUS_SECRET_HOURS so
 * that receivers can change over without refusing a delivery. A dry run answers a secret that
 * is not kept.
 */
export const rotateWebhookSecret: Command = {
  name: `${webhookEndpointIdentity.name}.rotate_secret`,
  async execute(ctx, request) {
    const existing = await findTarget(ctx, request, endpointsResource);
    const validation = validateBody({}, request.body);
    if (validation.errors.length) throw errors.validationFailed(validation.errors);
    const secret = newSecret();
    const row = ctx.dryRun
      ? { ...existing, secret, updated_at: ctx.now }
      : await ctx.db.one(sql.type(webhookEndpointTable.row)`
          UPDATE webhook_endpoints
          SET previous_secret = secret,
              previous_secret_expires_at = now() + make_interval(hours => ${PREVIOUS_SECRET_HOURS}),
              secret = ${seal(secret)}, updated_at = now()
          WHERE institution_id = ${ctx.institution.id} AND id = ${existing.id}
          RETURNING ${columnsOf(webhookEndpointTable)}`);
    return {
      status: 200,
      body: presentWithSecret(row),
      eventObject: presentWebhookEndpoint(row),
      secretFields: ['secret'],
    };
  },
};
