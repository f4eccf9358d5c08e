import { sql } from 'slonik';
import { z } from 'zod';
import { calendarDate, money, text } from '../../validation/fields.js';
import type { JsonValue } from '../../json.js';
import type { Shape } from '../../validation/validateBody.js';
import { designationInput, MAX_SPLITS } from '../gifts/schema.js';
import type { Table } from '../table.js';

/** The path segment of a gift's refunds: `/gifts/{id}/refunds`. */
export const giftRefundsSegment = 'refunds';

export const giftRefundShape: Shape = {
  amount: { schema: money, required: true },
  refund_date: { schema: calendarDate, required: true },
  reason: { schema: text(500), nullable: true },
  designations: {
    schema: z
      .array(designationInput, { message: 'must be an array' })
      .max(MAX_SPLITS, { message: `must have at most ${MAX_SPLITS} designations` }),
  },
};

// `designations` has no default to state: an omitted one is filled from the gift's own split.
export const giftRefundDefaults: Record<string, JsonValue> = { reason: null };

/**
 * What one fund gave back: the gift's designation to it, reduced by `amount` (and `base_amount`
 * in the base currency; absent on a refund of a gift that has no rate).
 */
export const refundDesignation = z.object({
  fund_id: z.number(),
  amount: z.number(),
  base_amount: z.number().optional(),
});
export type RefundDesignation = z.infer<typeof refundDesignation>;

const giftRefundRow = z.object({
  id: z.number(),
  gift_id: z.number(),
  /** numeric(14,2) as exact text from the database; a number in a dry-run preview. */
  amount: z.union([z.string(), z.number()]),
  base_amount: z.union([z.string(), z.number()]).nullable(),
  refund_date: z.string(),
  reason: z.string().nullable(),
  designations: z.array(refundDesignation),
  created_at: z.string(),
  updated_at: z.string(),
});
export type GiftRefundRow = z.infer<typeof giftRefundRow>;
export type GiftRefundFields = Omit<GiftRefundRow, 'id' | 'created_at' | 'updated_at'>;

export const giftRefundTable: Table<GiftRefundRow, GiftRefundFields> = {
  name: 'gift_refunds',
  row: giftRefundRow,
  readAs: { refund_date: sql.fragment`refund_date::text` },
  writeAs: {
    amount: (amount) => sql.fragment`${String(amount)}::numeric`,
    base_amount: (amount) => sql.fragment`${amount === null ? null : String(amount)}::numeric`,
    refund_date: (date) => sql.fragment`${date}::date`,
    designations: (designations) => sql.fragment`${JSON.stringify(designations)}::jsonb`,
  },
};
