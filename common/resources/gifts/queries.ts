import { sql, type CommonQueryMethods } from 'slonik';

export async function deleteGift(
  db: CommonQueryMethods,
  institutionId: number,
  id: number,
): Promise<void> {
  await db.query(
    sql.unsafe`DELETE FROM gifts WHERE institution_id = ${institutionId} AND id = ${id}`,
  );
}
