import type { GiftRefundResponse } from './response.js';
import type { GiftRefundRow } from './schema.js';

export const presentGiftRefund = (row: GiftRefundRow): GiftRefundResponse => ({
  id: row.id,
  object: 'gift_refund',
  gift_id: row.gift_id,
  amount: Number(row.amount),
  base_amount: row.base_amount === null ? null : Number(row.base_amount),
  refund_date: row.refund_date,
  reason: row.reason,
  designations: row.designations.map((part) => ({
    fund_id: part.fund_id,
    amount: part.amount,
    base_amount: part.base_amount ?? null,
  })),
  created_at: row.created_at,
});
