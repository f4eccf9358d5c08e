import { eventTypes, type EventType } from '../events/types.js';
import type { JsonObject } from '../json.js';
import type { JsonSchema } from './jsonSchema.js';

/** The headers of every delivery (Standard Webhooks), as the receiver gets them. */
const deliveryHeaders: JsonSchema[] = [
  {
    name: 'webhook-id',
    in: 'header',
    required: true,
    description:
      'The event’s id, the same on every retry of it: drop a delivery whose id you have handled.',
    schema: { type: 'string', maxLength: 100 },
    example: 'evt_5f2c8e1a9b0d4c7e3a6f1b2d4c7e3a6f',
  },
  {
    name: 'webhook-timestamp',
    in: 'header',
    required: true,
    description:
      'When this attempt was signed, in unix seconds; verification refuses one more than 5 minutes off.',
    schema: { type: 'string', pattern: '^\\d{1,12}$', maxLength: 12 },
    example: '1763719200',
  },
  {
    name: 'webhook-signature',
    in: 'header',
    required: true,
    description:
      '`v1,` and the base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}`, keyed by the secret’s decoded bytes; two of them, space-separated, for 24 hours after a rotation. Verify on the raw body, e.g. with the `standardwebhooks` package.',
    schema: { type: 'string', maxLength: 500 },
    example: 'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
  },
];

/** What an event of this type carries, as an example: the envelope with a record of its object. */
function examplePayload(eventType: EventType): JsonObject {
  const happened = eventType.type.slice(eventType.objectType.length + 1);
  const object: JsonObject =
    happened === 'deleted'
      ? { id: 1, object: eventType.objectType, deleted: true }
      : { id: 1, object: eventType.objectType };
  const data: JsonObject = { object };
  // An update's old values: which fields depends on the request, so none are shown.
  if (eventType.request.method === 'PATCH') data.previous_attributes = {};
  return {
    id: 'evt_5f2c8e1a9b0d4c7e3a6f1b2d4c7e3a6f',
    object: 'event',
    type: eventType.type,
    created_at: '2026-11-21T10:00:00.000Z',
    request_id: 'req_1964dd74e0436ec682bc0159',
    api_key_id: 'key_3k2j1h0g9f8e7d6c',
    data,
  };
}

/**
 * The OpenAPI 3.1 `webhooks` section: one entry per event type, derived from the event types
 * list, each a POST of the event (the `Event` schema, as `GET /events/{id}` answers it) that a
 * receiver answers 2xx within 10 seconds.
 */
export function webhooksSection(): Record<string, JsonSchema> {
  // One entry per type, naming every write that makes it (a consequence shares its type).
  const writesOf = (type: string) =>
    eventTypes
      .filter((candidate) => candidate.type === type)
      .map(({ request }) => `\`${request.method} ${request.path}\``)
      .join(' or ');
  const firstOfType = eventTypes.filter(
    (eventType, index) => eventTypes.findIndex(({ type }) => type === eventType.type) === index,
  );
  return Object.fromEntries(
    firstOfType.map((eventType) => [
      eventType.type,
      {
        post: {
          operationId: `webhook_${eventType.type.replace('.', '_')}`,
          summary: `Webhook: ${eventType.type}`,
          description: `Sent to every enabled endpoint whose \`enabled_events\` match \`${eventType.type}\` once the write that makes it (${writesOf(eventType.type)}) has committed. The body is the event as \`GET /events/{id}\` answers it; \`data.object\` is the ${eventType.request.label} as \`GET\` returns it after the write. Retried on the schedule until a 2xx; see docs/receiving-webhooks.md.`,
          tags: ['Events'],
          security: [],
          parameters: deliveryHeaders,
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: { $ref: '#/components/schemas/Event' },
                example: examplePayload(eventType),
              },
            },
          },
          responses: {
            '200': {
              description:
                'Any 2xx within 10 seconds is a delivery. Anything else (a timeout, a redirect, a 4xx or 5xx) is retried; 410 Gone disables the endpoint.',
            },
          },
        },
      },
    ]),
  );
}
