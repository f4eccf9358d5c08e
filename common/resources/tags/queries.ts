import { sql, type CommonQueryMethods } from 'slonik';

/** Deletes a tag and takes it off every donor that carries it, in the caller's transaction. */
export async function deleteTag(
  db: CommonQueryMethods,
  institutionId: number,
  id: number,
): Promise<void> {
  await db.query(sql.unsafe`
    UPDATE donors SET tag_ids = array_remove(tag_ids, ${id}::bigint), updated_at = now()
    WHERE institution_id = ${institutionId} AND tag_ids @> ARRAY[${id}::bigint]`);
  await db.query(
    sql.unsafe`DELETE FROM tags WHERE institution_id = ${institutionId} AND id = ${id}`,
  );
}
