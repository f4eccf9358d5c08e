import { sql, type CommonQueryMethods } from 'slonik';
import { givingRow, type GivingRow } from './schema.js';

export function findGiving(
  db: CommonQueryMethods,
  institutionId: number,
  donorId: number,
): Promise<GivingRow> {
  return db.one(sql.type(givingRow)`
    SELECT coalesce(sum(amount), 0)::text AS total_amount, count(*)::int AS gift_count,
           min(gift_date) AS first_gift_date, max(gift_date) AS last_gift_date
    FROM gifts WHERE institution_id = ${institutionId} AND donor_id = ${donorId}`);
}

export function donorHasGifts(
  db: CommonQueryMethods,
  institutionId: number,
  donorId: number,
): Promise<boolean> {
  return db.exists(sql.unsafe`
    SELECT 1 FROM gifts WHERE institution_id = ${institutionId} AND donor_id = ${donorId}`);
}

export async function deleteDonor(
  db: CommonQueryMethods,
  institutionId: number,
  id: number,
): Promise<void> {
  await db.query(
    sql.unsafe`DELETE FROM donors WHERE institution_id = ${institutionId} AND id = ${id}`,
  );
}
