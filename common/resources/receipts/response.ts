import { z } from 'zod';
import { addressResponse } from '../donors/response.js';
import {
  calendarDay,
  moneyAmount,
  recordIdOf,
  reference,
  timestamp,
  timestamps,
} from '../responseFields.js';
import { receiptStatuses } from './schema.js';

export const receiptResponse = z.object({
  id: recordIdOf('receipt'),
  object: z.literal('receipt'),
  number: z
    .number()
    .int()
    .min(0)
    .max(Number.MAX_SAFE_INTEGER)
    .describe(
      'Per institution: 1, 2, 3, … in the order of issue, with no gap and never reused. 0 in the response to a dry run.',
    ),
  gift_id: reference('receipted gift'),
  donor_id: reference('donor the gift is from'),
  issued_on: calendarDay,
  amount: moneyAmount.describe('The gift’s `net_amount` when the receipt was issued.'),
  benefit_amount: moneyAmount.describe(
    'The gift’s `benefit_amount`: fair market value of goods or services the donor received.',
  ),
  deductible_amount: moneyAmount.describe(
    '`amount - benefit_amount`, and 0 when that is negative.',
  ),
  currency: z.string().describe('ISO 4217 code: the gift’s currency.'),
  status: z.enum(receiptStatuses).describe('`void`: withdrawn; its number stays used.'),
  donor_name: z.string().describe('The donor’s `display_name` when the receipt was issued.'),
  donor_address: addressResponse
    .nullable()
    .describe('The donor’s `address` when the receipt was issued; null when it had none.'),
  void_reason: z.string().nullable(),
  voided_at: timestamp.nullable(),
  ...timestamps,
});
export type ReceiptResponse = z.infer<typeof receiptResponse>;
