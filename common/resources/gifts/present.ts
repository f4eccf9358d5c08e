import { toCents } from '../../money.js';
import { presentCodes } from '../campaigns/recordCoding.js';
import type { GiftResponse } from './response.js';
import type { GiftRow } from './schema.js';
import { presentTribute } from './tribute.js';

/** What the gift still counts for in every total: nothing once voided. */
export function netCents(row: Pick<GiftRow, 'amount' | 'amount_refunded' | 'status'>): bigint {
  return row.status === 'voided' ? 0n : toCents(row.amount) - toCents(row.amount_refunded);
}

export const presentGift = (row: GiftRow): GiftResponse => ({
  id: row.id,
  object: 'gift',
  donor_id: row.donor_id,
  recurring_gift_id: row.recurring_gift_id,
  amount: Number(row.amount),
  currency: row.currency,
  exchange_rate: row.exchange_rate === null ? null : Number(row.exchange_rate),
  base_amount: row.base_amount === null ? null : Number(row.base_amount),
  subject: row.subject,
  gift_date: row.gift_date,
  type: row.type,
  check_number: row.check_number,
  fund_id: row.designations.length === 1 ? row.designations[0]!.fund_id : null,
  designations: row.designations.map((part) => ({
    fund_id: part.fund_id,
    amount: part.amount,
    amount_refunded: part.amount_refunded,
    base_amount: part.base_amount ?? null,
    ...presentCodes(part),
  })),
  soft_credits: row.soft_credits.map((credit) => ({
    donor_id: credit.donor_id,
    amount: credit.amount,
    reason: credit.reason,
    base_amount: credit.base_amount ?? null,
  })),
  matches_gift_id: row.matches_gift_id,
  matched_by_gift_ids: row.matched_by_gift_ids,
  benefit_amount: Number(row.benefit_amount),
  status: row.status,
  amount_refunded: Number(row.amount_refunded),
  net_amount: Number(netCents(row)) / 100,
  void_reason: row.void_reason,
  voided_at: row.voided_at,
  pledge_id: row.pledge_id,
  tribute: presentTribute(row),
  campaign_id: row.campaign_id,
  appeal_id: row.appeal_id,
  created_at: row.created_at,
  updated_at: row.updated_at,
});
