import { designationCodesResponse, recordCodesResponse } from '../campaigns/codesResponse.js';
import { z } from 'zod';
import { MAX_SPLITS } from '../gifts/schema.js';
import {
  baseAmountValue,
  calendarDay,
  exchangeRateValue,
  moneyAmount,
  recordIdOf,
  reference,
  timestamps,
} from '../responseFields.js';
import { frequencies, recurringGiftStatuses } from './schema.js';

export const recurringGiftResponse = z.object({
  id: recordIdOf('recurring gift'),
  object: z.literal('recurring_gift'),
  donor_id: reference('donor'),
  amount: moneyAmount.describe('What each payment is expected to be.'),
  currency: z.string().describe('ISO 4217 code.'),
  exchange_rate: exchangeRateValue.nullable(),
  base_amount: baseAmountValue,
  frequency: z.enum(frequencies),
  start_on: calendarDay.describe('The date of the first expected payment.'),
  fund_id: reference('designated fund')
    .nullable()
    .describe('The fund when there is exactly one designation; null otherwise.'),
  designations: z
    .array(
      z.object({ fund_id: reference('fund'), amount: moneyAmount, ...designationCodesResponse }),
    )
    .max(MAX_SPLITS)
    .describe('The split across funds, in the order given; `[]` for undesignated giving.'),
  status: z.enum(recurringGiftStatuses),
  next_expected_on: calendarDay
    .nullable()
    .describe(
      'The first date of the schedule after the last payment (on or after the day it was last resumed); null once cancelled.',
    ),
  last_gift_date: calendarDay
    .nullable()
    .describe('The `gift_date` of the latest payment that is not voided; null before the first.'),
  gift_count: z
    .number()
    .int()
    .min(0)
    .describe('How many payments (gifts naming it, not voided) it has had.'),
  total_given: moneyAmount.describe(
    'The payments summed in the base currency: each one’s `base_amount` net of its refunds’, voided ones left out.',
  ),
  lapsed: z
    .boolean()
    .describe(
      'Active, and its expected payment is more than one period late: today is after the schedule’s date that follows `next_expected_on`. Never for a paused or cancelled one.',
    ),
  ...recordCodesResponse,
  ...timestamps,
});
export type RecurringGiftResponse = z.infer<typeof recurringGiftResponse>;
