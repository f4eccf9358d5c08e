import { sql, type CommonQueryMethods, type FragmentSqlToken } from 'slonik';
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

/**
 * The institution's base currency as committed, not as the API key's cached institution says:
 * a PATCH /institution may have changed it since. Held FOR KEY SHARE by a real write, so that a
 * change of currency (which holds the row FOR UPDATE) commits before this read or after the write.
 */
export function committedBaseCurrency(
  db: CommonQueryMethods,
  institutionId: number,
  lock: FragmentSqlToken,
): Promise<string> {
  return db.oneFirst(sql.type(z.object({ currency: z.string() }))`
    SELECT currency FROM institutions WHERE id = ${institutionId} ${lock}`);
}
