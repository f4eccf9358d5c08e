import { randomBytes } from 'node:crypto';
import { sql } from 'slonik';
import { z } from 'zod';
import type { ResourceIdentity } from '../../commands/resourceCommands.js';
import { eventTypes } from '../../events/types.js';
import { oneOf, text } from '../../validation/fields.js';
import type { Shape } from '../../validation/validateBody.js';
import { urlProblem } from '../../webhooks/policy.js';
import type { Table } from '../table.js';

export const webhookEndpointIdentity: ResourceIdentity = {
  name: 'webhook_endpoints',
  object: 'webhook_endpoint',
  label: 'webhook endpoint',
  path: '/webhook-endpoints',
};

/** Standard Webhooks' form: `whsec_` and the base64 of the key's bytes (32 here; 24 is the least). */
export const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

const url = z
  .string({ message: 'must be a string' })
  .trim()
  .max(2048, { message: 'must be at most 2048 characters' })
  .superRefine((value, context) => {
    const problem = urlProblem(value);
    if (problem) context.addIssue({ code: 'custom', message: problem });
  });

/**
 * A type is known when the event list names it; `<object>.*` when the object has events. The
 * list is read when a body is judged, not when this module loads: it is derived from the
 * resources, this one among them.
 */
function eventPatternProblem(pattern: string): string | null {
  if (pattern === '*') return null;
  const known = pattern.endsWith('.*')
    ? eventTypes.some((eventType) => eventType.objectType === pattern.slice(0, -2))
    : eventTypes.some((eventType) => eventType.type === pattern);
  return known
    ? null
    : `${pattern} is not an event type (such as gift.created), an object's types (such as gift.*) or *`;
}

const enabledEvents = z
  .array(z.string({ message: 'must be a string' }), { message: 'must be an array of event types' })
  .min(1, { message: 'must name at least one event type, or *' })
  .max(100, { message: 'must name at most 100 event types' })
  .superRefine((patterns, context) => {
    patterns.forEach((pattern, index) => {
      const problem = eventPatternProblem(pattern);
      if (problem) context.addIssue({ code: 'custom', message: problem, path: [index] });
    });
  })
  .transform((patterns) => [...new Set(patterns)]);

export const webhookEndpointShape: Shape = {
  url: { schema: url, required: true },
  enabled_events: { schema: enabledEvents, required: true },
  description: { schema: text(500), nullable: true },
  status: { schema: oneOf(['enabled', 'disabled'] as const) },
};

export const webhookEndpointDefaults = { description: null, status: 'enabled' } as const;

export const webhookEndpointRow = z.object({
  id: z.number(),
  url: z.string(),
  enabled_events: z.array(z.string()),
  description: z.string().nullable(),
  status: z.enum(['enabled', 'disabled']),
  secret: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type WebhookEndpointRow = z.infer<typeof webhookEndpointRow>;
export type WebhookEndpointFields = Omit<WebhookEndpointRow, 'id' | 'created_at' | 'updated_at'>;

export const webhookEndpointTable: Table<WebhookEndpointRow, WebhookEndpointFields> = {
  name: 'webhook_endpoints',
  row: webhookEndpointRow,
  writeAs: { enabled_events: (patterns) => sql.array(patterns, 'text') },
};
