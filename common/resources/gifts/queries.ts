import { sql, type CommonQueryMethods, type FragmentSqlToken } from 'slonik';
import { giftRow, type GiftFields, type GiftRow } from './schema.js';

export const columns = sql.fragment`
  id, donor_id, amount, currency, subject, gift_date::text AS gift_date, type, check_number, fund_id,
  created_at, updated_at`;

export function findGift(
  db: CommonQueryMethods,
  institutionId: number,
  id: number,
  lock: FragmentSqlToken = sql.fragment``,
): Promise<GiftRow | null> {
  return db.maybeOne(sql.type(giftRow)`
    SELECT ${columns} FROM gifts WHERE institution_id = ${institutionId} AND id = ${id} ${lock}`);
}

/**
 * The insert returning the new row, as a fragment: also the first half of a single-statement
 * write, whose `guard` (a condition) must hold for anything to be inserted.
 */
export const giftInsert = (
  institutionId: number,
  gift: GiftFields,
  guard: FragmentSqlToken = sql.fragment`true`,
) => sql.fragment`
    INSERT INTO gifts (institution_id, donor_id, amount, currency, subject, gift_date, type, check_number, fund_id)
    SELECT ${institutionId}, ${gift.donor_id}, ${String(gift.amount)}::numeric, ${gift.currency},
           ${gift.subject}, ${gift.gift_date}::date, ${gift.type}, ${gift.check_number}, ${gift.fund_id}
    WHERE ${guard}
    RETURNING ${columns}`;

export function insertGift(
  db: CommonQueryMethods,
  institutionId: number,
  gift: GiftFields,
): Promise<GiftRow> {
  return db.one(sql.type(giftRow)`${giftInsert(institutionId, gift)}`);
}

export function updateGift(
  db: CommonQueryMethods,
  institutionId: number,
  id: number,
  gift: GiftFields,
): Promise<GiftRow> {
  return db.one(sql.type(giftRow)`
    UPDATE gifts SET donor_id = ${gift.donor_id}, amount = ${String(gift.amount)}::numeric,
      currency = ${gift.currency}, subject = ${gift.subject}, gift_date = ${gift.gift_date}::date,
      type = ${gift.type}, check_number = ${gift.check_number}, fund_id = ${gift.fund_id},
      updated_at = now()
    WHERE institution_id = ${institutionId} AND id = ${id}
    RETURNING ${columns}`);
}

export async function deleteGift(
  db: CommonQueryMethods,
  institutionId: number,
  id: number,
): Promise<void> {
  await db.query(
    sql.unsafe`DELETE FROM gifts WHERE institution_id = ${institutionId} AND id = ${id}`,
  );
}
