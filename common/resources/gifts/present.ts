import type { GiftResponse } from './response.js';
import type { GiftRow } from './schema.js';

export const presentGift = (row: GiftRow): GiftResponse => ({
  id: row.id,
  object: 'gift',
  donor_id: row.donor_id,
  amount: Number(row.amount),
  currency: row.currency,
  subject: row.subject,
  gift_date: row.gift_date,
  type: row.type,
  check_number: row.check_number,
  fund_id: row.fund_id,
  created_at: row.created_at,
  updated_at: row.updated_at,
});
