import { z } from 'zod';
import { MAX_SPLITS } from '../gifts/schema.js';
import { calendarDay, moneyAmount, recordIdOf, reference, timestamps } from '../responseFields.js';

// Append-only: a refund never changes, so it has no `updated_at`.
export const giftRefundResponse = z.object({
  id: recordIdOf('refund'),
  object: z.literal('gift_refund'),
  gift_id: reference('refunded gift'),
  amount: moneyAmount.describe('What was given back.'),
  refund_date: calendarDay,
  reason: z.string().nullable(),
  designations: z
    .array(
      z.object({
        fund_id: reference('fund'),
        amount: moneyAmount.describe('What this fund gave back of the gift.'),
      }),
    )
    .max(MAX_SPLITS)
    .describe(
      'What each fund of the gift gave back, summing to `amount`; `[]` for an undesignated gift.',
    ),
  created_at: timestamps.created_at,
});
export type GiftRefundResponse = z.infer<typeof giftRefundResponse>;
