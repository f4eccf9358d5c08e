import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';

/**
 * fundraising.md §2: the rate of `currency` in effect on `on` (the latest with `effective_on` on
 * or before it), as exact numeric text (`"0.006700"`), or null when the institution has none.
 */
export function findExchangeRate(
  db: CommonQueryMethods,
  institutionId: number,
  currency: string,
  on: string,
): Promise<string | null> {
  return db.maybeOneFirst(sql.type(z.object({ rate: z.string() }))`
    SELECT rate::text AS rate FROM exchange_rates
    WHERE institution_id = ${institutionId} AND currency = ${currency}
      AND effective_on <= ${on}::date
    ORDER BY effective_on DESC LIMIT 1`);
}

export async function deleteExchangeRate(
  db: CommonQueryMethods,
  institutionId: number,
  id: number,
): Promise<void> {
  await db.query(sql.unsafe`
    DELETE FROM exchange_rates WHERE institution_id = ${institutionId} AND id = ${id}`);
}
