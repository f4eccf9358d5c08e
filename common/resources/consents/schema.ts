import { z } from 'zod';
import { oneOf, text } from '../../validation/fields.js';
import type { JsonValue } from '../../json.js';
import type { Shape } from '../../validation/validateBody.js';
import type { Table } from '../table.js';

/** The path segment of a donor's consents: `/donors/{id}/consents`. */
export const consentsSegment = 'consents';

export const consentChannels = ['email', 'mail', 'phone', 'sms'] as const;
export const consentResponses = ['opt_in', 'opt_out'] as const;

/** How far past the time of the request a consent may say it was captured (clocks drift). */
export const CAPTURED_AT_LEEWAY_MS = 5 * 60 * 1000;

const TIMESTAMP = /^(\d{4}-\d{2}-\d{2})T\d{2}:\d{2}:\d{2}(\.\d{1,3})?(Z|[+-]\d{2}:\d{2})$/;

/** An ISO 8601 timestamp with its zone, normalised to UTC with milliseconds (product.md §1). */
export const instant = z
  .string({ message: 'must be a string' })
  .refine((value) => TIMESTAMP.test(value) && /^(?!0000)\d{4}-/.test(normalisedInstant(value)), {
    message: 'must be an ISO 8601 timestamp with its time zone, such as 2026-11-21T10:00:00Z',
    params: { code: 'invalid_format' },
  })
  .transform(normalisedInstant);

function normalisedInstant(value: string): string {
  const parsed = Date.parse(value);
  return Number.isNaN(parsed) ? '' : new Date(parsed).toISOString();
}

export const consentShape: Shape = {
  channel: { schema: oneOf(consentChannels), required: true },
  purpose: { schema: text(60), nullable: true },
  response: { schema: oneOf(consentResponses), required: true },
  source: { schema: text(100), required: true },
  statement: { schema: text(2000), nullable: true },
  captured_at: { schema: instant },
};

// `captured_at` has no default to state: an omitted one is the time of the request.
export const consentDefaults: Record<string, JsonValue> = { purpose: null, statement: null };

const consentRow = z.object({
  id: z.number(),
  donor_id: z.number(),
  channel: z.enum(consentChannels),
  purpose: z.string().nullable(),
  response: z.enum(consentResponses),
  source: z.string(),
  statement: z.string().nullable(),
  captured_at: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type ConsentRow = z.infer<typeof consentRow>;
export type ConsentFields = Omit<ConsentRow, 'id' | 'created_at' | 'updated_at'>;

export const consentTable: Table<ConsentRow, ConsentFields> = {
  name: 'consents',
  row: consentRow,
};
