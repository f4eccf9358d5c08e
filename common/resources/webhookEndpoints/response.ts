import { z } from 'zod';
import { recordIdOf, timestamps } from '../responseFields.js';

export const webhookEndpointResponse = z.object({
  id: recordIdOf('webhook endpoint'),
  object: z.literal('webhook_endpoint'),
  url: z.string().describe('Where events are POSTed.'),
  enabled_events: z
    .array(z.string())
    .max(100)
    .describe('Event types (`gift.created`), every type of an object (`gift.*`), or `*`.'),
  description: z.string().nullable(),
  status: z
    .enum(['enabled', 'disabled'])
    .describe(
      '`disabled` receives nothing. The service disables an endpoint whose url answers 410 Gone, or whose deliveries all failed for 5 days (event `webhook_endpoint.updated`, with null `request_id`).',
    ),
  secret: z
    .string()
    .regex(/^whsec_[A-Za-z0-9+/]+={0,2}$/)
    .optional()
    .describe(
      'The signing secret (`whsec_` and base64). Only in the answers of create and `rotate-secret`; keep it, it is never shown again.',
    ),
  ...timestamps,
});
export type WebhookEndpointResponse = z.infer<typeof webhookEndpointResponse>;
