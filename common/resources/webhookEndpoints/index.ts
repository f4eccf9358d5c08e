import type { ResourceDescriptor } from '../descriptor.js';
import { retrieveFrom } from '../table.js';
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  PREVIOUS_SECRET_HOURS,
  rotateWebhookSecret,
  updateWebhookEndpoint,
} from './commands.js';
import { webhookDeliveryResponse } from '../../webhooks/deliveries.js';
import { webhookEndpointList } from './list.js';
import { retryWebhookDelivery } from './retryDelivery.js';
import { presentWebhookEndpoint } from './present.js';
import { webhookEndpointResponse } from './response.js';
import {
  webhookEndpointDefaults,
  webhookEndpointIdentity,
  webhookEndpointShape,
  webhookEndpointTable,
} from './schema.js';

export const webhookEndpoints: ResourceDescriptor = {
  ...webhookEndpointIdentity,
  permission: 'webhooks',
  shape: webhookEndpointShape,
  defaults: webhookEndpointDefaults,
  response: webhookEndpointResponse,
  commands: {
    create: createWebhookEndpoint,
    update: updateWebhookEndpoint,
    delete: deleteWebhookEndpoint,
  },
  list: webhookEndpointList,
  retrieve: retrieveFrom(webhookEndpointTable, presentWebhookEndpoint),
  actions: [
    {
      name: 'rotate-secret',
      happened: 'secret_rotated',
      command: rotateWebhookSecret,
      shape: {},
      defaults: {},
      text: {
        component: 'WebhookEndpointRotateSecret',
        summary: 'Rotate a webhook endpoint’s secret',
        description: [
          `Makes a new signing secret and answers it in \`secret\`, once. For the next ${PREVIOUS_SECRET_HOURS} hours every delivery is signed with both the new and the previous secret (two signatures in \`webhook-signature\`, space-separated), so a receiver verifies with either while it changes over; then only the new secret signs.`,
          'A dry run answers a secret that is not kept.',
        ].join('\n\n'),
        notes: {},
        conflicts: [],
        example: {},
      },
    },
  ],
  nestedActions: [
    {
      under: 'deliveries',
      param: 'delivery_id',
      name: 'retry',
      object: 'webhook_delivery',
      label: 'webhook delivery',
      happened: 'retried',
      command: retryWebhookDelivery,
      response: webhookDeliveryResponse,
      text: {
        component: 'WebhookDelivery',
        operationId: 'retryWebhookDelivery',
        summary: 'Send a webhook delivery again now',
        description: [
          'Sends the delivery once more, whatever its status: it becomes `pending`, and the worker sends it as soon as this write has committed. Answers the delivery as it then is. The body is `{}`.',
          'The send adds an attempt and never removes the schedule: `next_attempt_at` stays the time of the next scheduled retry (null when they are spent). If the send is not a delivery, a delivery with a retry still scheduled stays `pending` until it, and one whose retries were spent is `failed` again.',
          'It is a write like any other: its event is `webhook_delivery.retried`, carrying the delivery; a dry run sends nothing, and a request replayed under its `Idempotency-Key` answers the same and sends nothing more. Two requests with different keys send twice.',
          'An endpoint or delivery of another institution is as absent as a missing one (404).',
        ].join('\n\n'),
        paramDescription: 'The delivery’s id, as the endpoint’s deliveries list gives it.',
      },
    },
  ],
  text: {
    tag: 'Webhook endpoints',
    component: 'WebhookEndpoint',
    notes: {
      url: 'An `https` URL. Hosts the operator lists in `WEBHOOK_ALLOWED_HOSTS` may use `http` and any address; no other URL may name an address that is not public unicast (422 `invalid_value`): loopback, private, shared, link-local (cloud metadata), multicast and every other reserved IPv4 range; IPv6 outside 2000::/3 or in one of its special-purpose blocks, among them IPv4-compatible `::a.b.c.d`, NAT64 local-use `64:ff9b:1::/48`, 6to4 `2002::/16`, Teredo `2001::/32` and documentation `2001:db8::/32`. IPv4-mapped `::ffff:a.b.c.d` and NAT64 `64:ff9b::/96` are judged as the IPv4 address they carry. Names are resolved and their addresses checked by the same rule at every delivery.',
      enabled_events:
        'Event types (`gift.created`), every type of one object (`gift.*`), or `*` for all; each must be a type the Events tag lists (422 `invalid_value`).',
      status: '`enabled` (default) or `disabled`. A disabled endpoint receives nothing.',
    },
    rules: [
      'Where committed writes are sent as signed webhooks (Standard Webhooks, standardwebhooks.com). Each event whose type matches `enabled_events` is POSTed to `url` as `GET /events/{id}` answers it, with the headers `webhook-id` (the event id, the same on every retry), `webhook-timestamp` (unix seconds) and `webhook-signature` (`v1,` and the base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}` keyed by the secret’s decoded bytes).',
      '`secret` is answered by the create and by `POST /webhook-endpoints/{id}/rotate-secret` only; no GET shows it.',
      'A 2xx answer within 10 seconds is a delivery. Anything else (a timeout, a refused connection, a redirect, which is not followed, a 4xx or 5xx) is retried with exponential backoff and jitter for about 3 days (5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, 10 h). A 410 Gone answer disables the endpoint, and so do 5 days in which its attempts all failed: failures without a delivery between them, the first at least 5 days before the latest (one failure followed by quiet days is not that). Delivery is at least once and in no guaranteed order: the event’s `created_at` orders them.',
    ].join('\n\n'),
    deleteNote: 'Deliveries not yet made to it are dropped.',
    filterNotes: { status: '`enabled` or `disabled`.' },
    examples: {
      create: {
        url: 'https://hooks.example.org/donor-gift-service',
        enabled_events: ['gift.*', 'receipt.issued'],
        description: 'Finance system',
      },
      update: { enabled_events: ['*'] },
    },
  },
};
