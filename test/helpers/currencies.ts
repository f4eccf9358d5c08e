/**
 * What a test of money in several currencies needs beside the gift fixtures (helpers/gifts.ts):
 * exchange rates made through the API, and the converted figures exactly as the database holds
 * them, so that a test can compare what was answered with what was stored.
 */
import { sql } from 'slonik';
import { service } from './gifts.js';
import { created } from './responses.js';

export interface ExchangeRate {
  id: number;
  currency: string;
  rate: number;
  effective_on: string;
}

export const createRate = (currency: string, rate: number, effectiveOn: string) =>
  created<ExchangeRate>(
    service.call('POST', '/api/v1/exchange-rates', {
      body: { currency, rate, effective_on: effectiveOn },
    }),
  );

/** A gift's money as stored: numeric columns as the database's text, the jsonb parts as they are. */
export const storedGiftMoney = (id: number) =>
  service.db.maybeOne(sql.unsafe`
    SELECT currency, amount::text AS amount, exchange_rate::text AS exchange_rate,
           base_amount::text AS base_amount, base_amount_refunded::text AS base_amount_refunded,
           designations, soft_credits
    FROM gifts WHERE id = ${id}`) as Promise<Record<string, unknown> | null>;

export interface StoredRefund {
  amount: string;
  base_amount: string | null;
  designations: { fund_id: number; amount: number; base_amount?: number }[];
}

/** A gift's refunds as stored, oldest first. */
export const storedRefunds = (giftId: number) =>
  service.db.any(sql.unsafe`
    SELECT amount::text AS amount, base_amount::text AS base_amount, designations
    FROM gift_refunds WHERE gift_id = ${giftId} ORDER BY id`) as Promise<readonly StoredRefund[]>;

/** A pledge's money as stored. */
export const storedPledgeMoney = (id: number) =>
  service.db.one(sql.unsafe`
    SELECT currency, amount::text AS amount, exchange_rate::text AS exchange_rate,
           base_amount::text AS base_amount, amount_paid::text AS amount_paid,
           base_amount_paid::text AS base_amount_paid, base_balance::text AS base_balance, status
    FROM pledges WHERE id = ${id}`);

/** A recurring gift's money as stored. */
export const storedRecurringMoney = (id: number) =>
  service.db.one(sql.unsafe`
    SELECT currency, amount::text AS amount, exchange_rate::text AS exchange_rate,
           base_amount::text AS base_amount
    FROM recurring_gifts WHERE id = ${id}`);

/** Every gift of the test institution with its money, for "nothing was written" comparisons. */
export const allGiftMoney = () =>
  service.db.any(sql.unsafe`
    SELECT id, currency, amount::text AS amount, exchange_rate::text AS exchange_rate,
           base_amount::text AS base_amount, designations, soft_credits, updated_at
    FROM gifts WHERE institution_id = ${service.tenant.institutionId} ORDER BY id`);

/** An issued receipt of the gift, written straight into its table as helpers/giftRefunds.ts does. */
export const issueReceipt = (giftId: number) =>
  service.db.query(sql.unsafe`
    INSERT INTO receipts (institution_id, number, gift_id, donor_id, issued_on, amount,
                          benefit_amount, deductible_amount, currency, donor_name)
    SELECT institution_id,
           (SELECT coalesce(max(number), 0) + 1 FROM receipts r WHERE r.institution_id = g.institution_id),
           id, donor_id, gift_date, amount - amount_refunded, 0, amount - amount_refunded,
           currency, 'Ada Lovelace'
    FROM gifts g WHERE id = ${giftId}`);
