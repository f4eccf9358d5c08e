import { sql, type CommonQueryMethods, type FragmentSqlToken } from 'slonik';
import { z } from 'zod';
import { giftStatuses } from '../gifts/schema.js';
import { columnsOf } from '../table.js';
import { receiptTable, type ReceiptFields, type ReceiptRow } from './schema.js';

const giftToReceipt = z.object({
  id: z.number(),
  donor_id: z.number(),
  amount: z.string(),
  amount_refunded: z.string(),
  benefit_amount: z.string(),
  currency: z.string(),
  gift_date: z.string(),
  status: z.enum(giftStatuses),
});
export type GiftToReceipt = z.infer<typeof giftToReceipt>;

/** What a receipt is made of, of one gift of the institution; null when it is not theirs. */
export function findGiftToReceipt(
  db: CommonQueryMethods,
  institutionId: number,
  giftId: number,
  lock: FragmentSqlToken,
): Promise<GiftToReceipt | null> {
  return db.maybeOne(sql.type(giftToReceipt)`
    SELECT id, donor_id, amount, amount_refunded, benefit_amount, currency::text AS currency,
      gift_date::text AS gift_date, status
    FROM gifts WHERE institution_id = ${institutionId} AND id = ${giftId} ${lock}`);
}

/**
 * Inserts the receipt with the institution's next number, in one statement. The number comes
 * from the institution's row in receipt_numbers, whose row lock orders concurrent issues until
 * the transaction ends: a rollback gives the number back, where a sequence would skip it. So
 * the caller runs this last, once every check has passed, to hold that lock briefly.
 */
export function issueReceipt(
  db: CommonQueryMethods,
  institutionId: number,
  fields: ReceiptFields,
): Promise<ReceiptRow> {
  return db.one(sql.type(receiptTable.row)`
    WITH taken AS (
      INSERT INTO receipt_numbers (institution_id, last_number) VALUES (${institutionId}, 1)
      ON CONFLICT (institution_id)
        DO UPDATE SET last_number = receipt_numbers.last_number + 1
      RETURNING last_number
    )
    INSERT INTO receipts (institution_id, number, gift_id, donor_id, issued_on, amount,
      benefit_amount, deductible_amount, currency, donor_name, donor_address)
    SELECT ${institutionId}, taken.last_number, ${fields.gift_id}, ${fields.donor_id},
      ${fields.issued_on}::date, ${String(fields.amount)}::numeric,
      ${String(fields.benefit_amount)}::numeric, ${String(fields.deductible_amount)}::numeric,
      ${fields.currency}, ${fields.donor_name},
      ${fields.donor_address ? sql.jsonb(fields.donor_address) : null}::jsonb
    FROM taken
    RETURNING ${columnsOf(receiptTable)}`) as Promise<ReceiptRow>;
}

/** Marks an issued receipt void; its number stays used. */
export function voidReceipt(
  db: CommonQueryMethods,
  institutionId: number,
  id: number,
  reason: string,
): Promise<ReceiptRow> {
  return db.one(sql.type(receiptTable.row)`
    UPDATE receipts
    SET status = 'void', void_reason = ${reason}, voided_at = now(), updated_at = now()
    WHERE institution_id = ${institutionId} AND id = ${id}
    RETURNING ${columnsOf(receiptTable)}`) as Promise<ReceiptRow>;
}
