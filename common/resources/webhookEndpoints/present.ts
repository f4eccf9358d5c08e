import { unseal } from '../../secrets.js';
import type { WebhookEndpointResponse } from './response.js';
import type { WebhookEndpointRow } from './schema.js';

/** The endpoint as GET answers it: never with its secret. */
export const presentWebhookEndpoint = (row: WebhookEndpointRow): WebhookEndpointResponse => ({
  id: row.id,
  object: 'webhook_endpoint',
  url: row.url,
  enabled_events: row.enabled_events,
  description: row.description,
  status: row.status,
  created_at: row.created_at,
  updated_at: row.updated_at,
});

/** The answer of create and rotate-secret, the only ones that tell the secret. */
export const presentWithSecret = (row: WebhookEndpointRow): WebhookEndpointResponse => {
  const { created_at, updated_at, ...rest } = presentWebhookEndpoint(row);
  return { ...rest, secret: unseal(row.secret), created_at, updated_at };
};
