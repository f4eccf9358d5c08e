import { z } from 'zod';
import {
  baseAmountValue,
  calendarDay,
  exchangeRateValue,
  moneyAmount,
  recordIdOf,
  reference,
  timestamp,
  timestamps,
} from '../responseFields.js';
import { designationCodesResponse, recordCodesResponse } from '../campaigns/codesResponse.js';
import { giftStatuses, giftType, MAX_SPLITS, softCreditReasons } from './schema.js';
import { tributeResponse } from './tribute.js';

export const designationResponse = z.object({
  fund_id: reference('fund'),
  amount: moneyAmount.describe('What the fund received of the gift.'),
  amount_refunded: moneyAmount.describe('What the fund gave back of it (refunds). Read-only.'),
  base_amount: moneyAmount
    .nullable()
    .describe(
      'The designation in the base currency: the gift’s `base_amount` apportioned over its designations, summing exactly to it (the remainder on the last). Read-only.',
    ),
  ...designationCodesResponse,
});

export const softCreditResponse = z.object({
  donor_id: reference('soft-credited donor'),
  amount: moneyAmount,
  reason: z.enum(softCreditReasons),
  base_amount: moneyAmount
    .nullable()
    .describe('The soft credit in the base currency, at the gift’s rate. Read-only.'),
});

export const giftResponse = z.object({
  id: recordIdOf('gift'),
  object: z.literal('gift'),
  donor_id: reference('donor'),
  recurring_gift_id: reference('recurring gift')
    .nullable()
    .describe('The recurring gift this gift is a payment of; null for a gift on its own.'),
  amount: moneyAmount,
  currency: z.string().describe('ISO 4217 code.'),
  exchange_rate: exchangeRateValue.nullable(),
  base_amount: baseAmountValue,
  subject: z.string(),
  gift_date: calendarDay,
  type: giftType,
  check_number: z.string().nullable(),
  fund_id: reference('designated fund')
    .nullable()
    .describe('The fund when the gift has exactly one designation; null otherwise.'),
  designations: z
    .array(designationResponse)
    .max(MAX_SPLITS)
    .describe('The split across funds, in the order given; `[]` for an undesignated gift.'),
  soft_credits: z.array(softCreditResponse).max(MAX_SPLITS),
  matches_gift_id: reference('matched gift').nullable(),
  matched_by_gift_ids: z
    .array(reference('matching gift'))
    .max(MAX_SPLITS)
    .describe('Gifts that name this one in `matches_gift_id`, in id order.'),
  benefit_amount: moneyAmount.describe(
    'Fair market value of goods or services the donor received for the gift.',
  ),
  status: z.enum(giftStatuses).describe('`voided`: entered in error; it leaves every total.'),
  amount_refunded: moneyAmount.describe('The sum of the gift’s refunds.'),
  net_amount: moneyAmount.describe('`amount - amount_refunded`; 0 when voided.'),
  void_reason: z.string().nullable(),
  voided_at: timestamp.nullable(),
  pledge_id: reference('pledge this gift pays')
    .nullable()
    .describe('The pledge this gift is a payment of; null for a gift that pays no pledge.'),
  tribute: tributeResponse,
  ...recordCodesResponse,
  ...timestamps,
});
export type GiftResponse = z.infer<typeof giftResponse>;
