import { z } from 'zod';

/**
 * Building blocks of the response schemas (common/resources/<r>/response.ts). They describe what
 * the service sends; the request rules live in each resource's schema.ts.
 */

/** A record's own id: 0 in a dry-run create, positive otherwise. */
export const recordIdOf = (label: string) =>
  z
    .number()
    .int()
    .min(0)
    .max(Number.MAX_SAFE_INTEGER)
    .describe(`The ${label}'s id. 0 in the response to a dry-run create.`);

/** The id of another record this one refers to. */
export const reference = (label: string) =>
  z.number().int().positive().max(Number.MAX_SAFE_INTEGER).describe(`The id of the ${label}.`);

/** ISO 8601 in UTC with milliseconds (product.md §1). */
export const timestamp = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
  .meta({ format: 'date-time', examples: ['2026-11-21T10:00:00.000Z'] });

/** A calendar date, returned exactly as it was sent. */
export const calendarDay = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/)
  .meta({ format: 'date', examples: ['2026-02-14'] });

/** Money as a JSON number (never a string), at most 2 decimal places. */
export const moneyAmount = z
  .number()
  .describe('A JSON number with at most 2 decimal places.')
  .meta({ examples: [2500] });

/** fundraising.md §2: what a record in another currency was converted at. */
export const exchangeRateValue = z
  .number()
  .describe(
    'Base-currency units for one unit of `currency`, at most 6 decimal places: 1 in the base currency; otherwise the rate sent, or the latest exchange rate in effect on the record’s date (`/exchange-rates`). Null only on a record made before currencies were kept and not yet given a rate.',
  )
  .meta({ examples: [1.0825] });

/** fundraising.md §2: an amount in the institution's base currency, which every total sums. */
export const baseAmountValue = moneyAmount
  .nullable()
  .describe(
    '`amount` in the institution’s base currency: `amount × exchange_rate`, rounded half-even to the cent. Every total sums these. Read-only.',
  );

/** `created_at` and `updated_at` of every resource. */
export const timestamps = {
  created_at: timestamp.describe('When the record was created; the time of a dry run in one.'),
  updated_at: timestamp.describe('When the record last changed; the time of a dry run in one.'),
};

/** `{"id": N, "object": "donor", "deleted": true}` (product.md §1). */
export const deletedResponse = (object: string) =>
  z.object({
    id: z.number().int().positive().max(Number.MAX_SAFE_INTEGER),
    object: z.literal(object),
    deleted: z.literal(true),
  });

/**
 * The `url` of a list: its endpoint, or for the records of one parent
 * (`/api/v1/gifts/:id/refunds`) the parent's own path (`/api/v1/gifts/7/refunds`).
 */
function listUrl(endpoint: string) {
  const parts = endpoint.split(/:\w+/);
  if (parts.length === 1) return z.literal(endpoint);
  const escape = (part: string) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return z.string().regex(new RegExp(`^${parts.map(escape).join('[1-9][0-9]*')}$`));
}

/** The list envelope of interface.md §2 around one page of items. */
export const listEnvelope = (endpoint: string, item: z.ZodType) =>
  z.object({
    object: z.literal('list'),
    url: listUrl(endpoint).describe('The path the collection was served from.'),
    has_more: z.boolean().describe('Whether another page exists in the direction being paged.'),
    next_cursor: z
      .string()
      .nullable()
      .describe('Pass as `starting_after` to page forward; null when nothing follows this page.'),
    previous_cursor: z
      .string()
      .nullable()
      .describe('Pass as `ending_before` to page backward; null when nothing precedes this page.'),
    data: z
      .array(item)
      .max(100)
      .describe('The records of this page, newest first (at most `limit`, 100 at most).'),
  });

/** The names a record's response carries that its request body may not set: its read-only fields. */
export const readOnlyOf = (response: z.ZodObject, shape: Record<string, unknown>): string[] =>
  Object.keys(response.shape).filter((name) => !Object.hasOwn(shape, name));
