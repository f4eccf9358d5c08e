import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';

/**
 * The institutions whose giving_years are bucketed by a start month they no longer have (their
 * fiscal_year_start_month changed since the years were built): each one's years built again for
 * the month it has now (migration 1735160000000). Until then retention reads giving_months,
 * whose answer is the same, only slower. The number of institutions rebuilt.
 */
export async function rebuildStaleGivingYears(pool: DatabasePool): Promise<number> {
  const stale = await pool.anyFirst(sql.type(z.object({ id: z.coerce.number() }))`
    SELECT id FROM institutions WHERE giving_years_start_month <> fiscal_year_start_month
    ORDER BY id`);
  for (const id of stale)
    await pool.transaction(async (transaction) => {
      // An institution's years are rebuilt in one statement, however many it has.
      await transaction.query(sql.unsafe`SET LOCAL statement_timeout = 0`);
      await transaction.query(sql.unsafe`SELECT giving_years_rebuild(${id})`);
    });
  return stale.length;
}
