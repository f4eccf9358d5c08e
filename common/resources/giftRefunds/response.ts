import { z } from 'zod';
import { MAX_SPLITS } from '../gifts/schema.js';
import { calendarDay, moneyAmount, recordIdOf, reference, timestamps } from '../responseFields.js';

// Append-only: a refund never changes, so it has no `updated_at`.
export const giftRefundResponse = z.object({
  id: recordIdOf('refund'),
  object: z.literal('gift_refund'),
  gift_id: reference('refunded gift'),
  amount: moneyAmount.describe('What was given back.'),
  base_amount: moneyAmount
    .nullable()
    .describe(
      'What was given back in the base currency, at the gift’s rate; the refund that gives back the rest of the gift gives back the rest of its `base_amount`, so a gift’s refunds sum exactly to it. Null for a gift without a rate.',
    ),
  refund_date: calendarDay,
  reason: z.string().nullable(),
  designations: z
    .array(
      z.object({
        fund_id: reference('fund'),
        amount: moneyAmount.describe('What this fund gave back of the gift.'),
        base_amount: moneyAmount
          .nullable()
          .describe('The same in the base currency; the parts sum exactly to `base_amount`.'),
      }),
    )
    .max(MAX_SPLITS)
    .describe(
      'What each fund of the gift gave back, summing to `amount`; `[]` for an undesignated gift.',
    ),
  created_at: timestamps.created_at,
});
export type GiftRefundResponse = z.infer<typeof giftRefundResponse>;
