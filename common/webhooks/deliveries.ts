import { sql } from 'slonik';
import { z } from 'zod';
import type { JsonObject } from '../json.js';
import { enumFilter, type ListSpec } from '../pagination/listSpec.js';
import { recordIdOf, timestamp, timestamps } from '../resources/responseFields.js';

/** One delivery of one event to one endpoint, with its latest attempt. */
export const webhookDeliveryResponse = z.object({
  id: recordIdOf('delivery'),
  object: z.literal('webhook_delivery'),
  event_id: z.string().describe('The event delivered: its `webhook-id`.'),
  event_type: z.string(),
  status: z
    .enum(['pending', 'delivered', 'failed'])
    .describe(
      '`pending` until a 2xx answer (`delivered`) or until its retries are spent, the endpoint answers 410 Gone or is disabled (`failed`).',
    ),
  attempts: z.number().int().min(0).describe('How many times it has been sent.'),
  status_code: z
    .number()
    .int()
    .nullable()
    .describe('The HTTP status of the latest attempt; null before one, or when none came back.'),
  duration_ms: z.number().int().nullable().describe('How long the latest attempt took.'),
  error: z
    .string()
    .nullable()
    .describe(
      'Why the latest attempt was not a delivery (a status, a timeout, a refused address).',
    ),
  next_attempt_at: timestamp
    .nullable()
    .describe(
      'When its next scheduled retry is sent (give or take a second; later while your institution has as many sends under way as it may); null once delivered, or when no retry is scheduled (failed, or only a send asked for by `retry` left).',
    ),
  ...timestamps,
});

export const deliveryRow = z.object({
  id: z.number(),
  event_id: z.string(),
  event_type: z.string(),
  status: z.enum(['pending', 'delivered', 'failed']),
  attempts: z.number(),
  last_status_code: z.number().nullable(),
  last_duration_ms: z.number().nullable(),
  last_error: z.string().nullable(),
  next_attempt_at: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});
type DeliveryRow = z.infer<typeof deliveryRow>;

export const presentDelivery = (row: DeliveryRow): JsonObject => ({
  id: row.id,
  object: 'webhook_delivery',
  event_id: row.event_id,
  event_type: row.event_type,
  status: row.status,
  attempts: row.attempts,
  status_code: row.last_status_code,
  duration_ms: row.last_duration_ms,
  error: row.last_error,
  next_attempt_at: row.next_attempt_at,
  created_at: row.created_at,
  updated_at: row.updated_at,
});

export const deliveryColumns = sql.fragment`
  id, event_id, event_type, status, attempts, last_status_code, last_duration_ms, last_error,
  next_attempt_at, created_at, updated_at`;

/** GET /webhook-endpoints/{id}/deliveries: newest first. */
export const webhookDeliveryList: ListSpec<DeliveryRow> = {
  endpoint: '/api/v1/webhook-endpoints/:id/deliveries',
  from: sql.fragment`webhook_deliveries`,
  institutionColumn: sql.fragment`institution_id`,
  key: sql.fragment`id`,
  columns: deliveryColumns,
  row: deliveryRow,
  keyOf: (row) => row.id,
  present: presentDelivery,
  filters: {
    status: enumFilter(sql.fragment`status`, ['pending', 'delivered', 'failed']),
  },
};

/** What the deliveries list needs of its parent: whose rows it lists. */
export const webhookDeliveriesOfEndpoint = {
  list: webhookDeliveryList,
  parent: { table: 'webhook_endpoints', label: 'webhook endpoint' },
  ofParent: (endpointId: number) => sql.fragment`endpoint_id = ${endpointId}`,
};
