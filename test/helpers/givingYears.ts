import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';

/**
 * The rows where an institution's giving_years (what retention reads) differ from its
 * giving_months summed per fiscal year under the start month the years were built for: each as
 * text, kept or summed; none when they agree.
 */
export function givingYearsDrift(
  db: CommonQueryMethods,
  institutionId: number,
): Promise<readonly string[]> {
  return db.anyFirst(sql.type(z.object({ row: z.string() }))`
    WITH kept AS (
      SELECT level, fiscal_year, unit_id, total, gift_count FROM giving_years
      WHERE institution_id = ${institutionId}),
    summed AS (
      SELECT m.level, fiscal_year_of_month(m.month, i.giving_years_start_month) AS fiscal_year,
             m.unit_id, sum(m.total) AS total, sum(m.gift_count)::int AS gift_count
      FROM giving_months m JOIN institutions i ON i.id = m.institution_id
      WHERE m.institution_id = ${institutionId}
      GROUP BY 1, 2, 3)
    SELECT row::text FROM ((TABLE kept EXCEPT TABLE summed)
                           UNION ALL (TABLE summed EXCEPT TABLE kept)) AS row`);
}
