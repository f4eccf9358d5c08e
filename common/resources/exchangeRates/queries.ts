import { sql, type CommonQueryMethods, type FragmentSqlToken, type ValueExpression } from 'slonik';
import { z } from 'zod';
import { hintRate } from './hints.js';

/**
 * The rate of `currency` in effect on `on`, as a scalar subquery over the institution's rates
 * (numeric; NULL when none): the latest with `effective_on` on or before the date.
 */
export const rateInEffect = (
  institutionId: number,
  currency: ValueExpression,
  on: ValueExpression,
): FragmentSqlToken => sql.fragment`(SELECT rate FROM exchange_rates
    WHERE institution_id = ${institutionId} AND currency = ${currency} AND effective_on <= ${on}
    ORDER BY effective_on DESC LIMIT 1)`;

/**
 * fundraising.md §2: the rate of `currency` in effect on `on` (the latest with `effective_on` on
 * or before it), as exact numeric text (`"0.006700"`), or null when the institution has none.
 * The rate found is hinted (hints.ts) for the next gift of the same currency and date.
 */
export async function findExchangeRate(
  db: CommonQueryMethods,
  institutionId: number,
  currency: string,
  on: string,
): Promise<string | null> {
  const rate = await db.maybeOneFirst(sql.type(z.object({ rate: z.string().nullable() }))`
    SELECT ${rateInEffect(institutionId, currency, sql.fragment`${on}::date`)}::text AS rate`);
  if (rate !== null) hintRate(institutionId, currency, on, rate);
  return rate;
}

export async function deleteExchangeRate(
  db: CommonQueryMethods,
  institutionId: number,
  id: number,
): Promise<void> {
  await db.query(sql.unsafe`
    DELETE FROM exchange_rates WHERE institution_id = ${institutionId} AND id = ${id}`);
}
