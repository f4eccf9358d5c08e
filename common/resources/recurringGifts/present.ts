import { presentCodes } from '../campaigns/recordCoding.js';
import type { RecurringGiftResponse } from './response.js';
import { isLapsed, type RecurringGiftRow } from './schema.js';

export const presentRecurringGift = (row: RecurringGiftRow): RecurringGiftResponse => ({
  id: row.id,
  object: 'recurring_gift',
  donor_id: row.donor_id,
  amount: Number(row.amount),
  currency: row.currency,
  exchange_rate: row.exchange_rate === null ? null : Number(row.exchange_rate),
  base_amount: row.base_amount === null ? null : Number(row.base_amount),
  frequency: row.frequency,
  start_on: row.start_on,
  fund_id: row.designations.length === 1 ? row.designations[0]!.fund_id : null,
  designations: row.designations.map((part) => ({
    fund_id: part.fund_id,
    amount: part.amount,
    ...presentCodes(part),
  })),
  status: row.status,
  next_expected_on: row.figures.next_expected_on,
  last_gift_date: row.figures.last_gift_date,
  gift_count: row.figures.gift_count,
  total_given: Number(row.figures.total_given),
  lapsed: isLapsed(row),
  campaign_id: row.campaign_id,
  appeal_id: row.appeal_id,
  created_at: row.created_at,
  updated_at: row.updated_at,
});
