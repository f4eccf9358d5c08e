import type { ReceiptResponse } from './response.js';
import type { ReceiptRow } from './schema.js';

export const presentReceipt = (row: ReceiptRow): ReceiptResponse => ({
  id: row.id,
  object: 'receipt',
  number: row.number,
  gift_id: row.gift_id,
  donor_id: row.donor_id,
  issued_on: row.issued_on,
  amount: Number(row.amount),
  benefit_amount: Number(row.benefit_amount),
  deductible_amount: Number(row.deductible_amount),
  currency: row.currency,
  status: row.status,
  donor_name: row.donor_name,
  donor_address: row.donor_address,
  void_reason: row.void_reason,
  voided_at: row.voided_at,
  created_at: row.created_at,
  updated_at: row.updated_at,
});
