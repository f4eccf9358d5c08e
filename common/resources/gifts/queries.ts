import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';

export async function deleteGift(
  db: CommonQueryMethods,
  institutionId: number,
  id: number,
): Promise<void> {
  await db.query(
    sql.unsafe`DELETE FROM gifts WHERE institution_id = ${institutionId} AND id = ${id}`,
  );
}

const receiptHistory = z.object({ issued: z.boolean(), ever: z.boolean() });

/** Whether the gift has an issued receipt now, and whether it ever had one (voided since). */
export function giftReceipts(
  db: CommonQueryMethods,
  institutionId: number,
  giftId: number,
): Promise<z.infer<typeof receiptHistory>> {
  return db.one(sql.type(receiptHistory)`
    SELECT coalesce(bool_or(status = 'issued'), false) AS issued, count(*) > 0 AS ever
    FROM receipts WHERE institution_id = ${institutionId} AND gift_id = ${giftId}`);
}
