import { z } from 'zod';
import { calendarDay, moneyAmount, recordIdOf, reference, timestamps } from '../responseFields.js';
import { giftTypes } from './schema.js';

export const giftResponse = z.object({
  id: recordIdOf('gift'),
  object: z.literal('gift'),
  donor_id: reference('donor'),
  amount: moneyAmount,
  currency: z.string().describe('ISO 4217 code.'),
  subject: z.string(),
  gift_date: calendarDay,
  type: z.enum(giftTypes),
  check_number: z.string().nullable(),
  fund_id: reference('designated fund').nullable(),
  ...timestamps,
});
export type GiftResponse = z.infer<typeof giftResponse>;
