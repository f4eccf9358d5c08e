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
          'Sends the delivery once more, whatever its status: it becomes `pending`, due now, and the worker sends it as soon as this write has committed; its scheduled retries, if any, stand. Answers the delivery as it then is. The body is `{}`.',
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
      url: 'An `https` URL. Hosts the operator lists in `WEBHOOK_ALLOWED_HOSTS` may use `http` and any address; no other URL may name a loopback, private, link-local, multicast or metadata address (422 `invalid_value`). Names are resolved and checked again at every delivery.',
      enabled_events:
        'Event types (`gift.created`), every type of one object (`gift.*`), or `*` for all; each must be a type the Events tag lists (422 `invalid_value`).',
      status: '`enabled` (default) or `disabled`. A disabled endpoint receives nothing.',
    },
    rules: [
      'Where committed writes are sent as signed webhooks (Standard Webhooks, standardwebhooks.com). Each event whose type matches `enabled_events` is POSTed to `url` as `GET /events/{id}` answers it, with the headers `webhook-id` (the event id, the same on every retry), `webhook-timestamp` (unix seconds) and `webhook-signature` (`v1,` and the base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}` keyed by the secret’s decoded bytes).',
      '`secret` is answered by the create and by `POST /webhook-endpoints/{id}/rotate-secret` only; no GET shows it.',
      'A 2xx answer within 10 seconds is a delivery. Anything else (a timeout, a refused connection, a redirect, which is not followed, a 4xx or 5xx) is retried with exponential backoff and jitter for about 3 days (5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, 10 h). A 410 Gone answer disables the endpoint, and so do 5 days in which its deliveries all failed. Delivery is at least once and in no guaranteed order: the event’s `created_at` orders them.',
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
