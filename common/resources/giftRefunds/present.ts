import type { GiftRefundResponse } from './response.js';
import type { GiftRefundRow } from './schema.js';

export const presentGiftRefund = (row: GiftRefundRow): GiftRefundResponse => ({
  id: row.id,
  object: 'gift_refund',
  gift_id: row.gift_id,
  amount: Number(row.amount),
  refund_date: row.refund_date,
  reason: row.reason,
  designations: row.designations.map((part) => ({ fund_id: part.fund_id, amount: part.amount })),
  created_at: row.created_at,
});
