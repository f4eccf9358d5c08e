import { sql, type CommonQueryMethods, type FragmentSqlToken } from 'slonik';
import { z } from 'zod';
import type { PeriodDays } from '../givingStatements/queries.js';

/**
 * The donors whose counted giving in the period is above `minTotal`, from giving_months (the
 * donor level: each donor's counted gifts by month; a period starts on a month's first day).
 */
function qualifying(
  institutionId: number,
  days: PeriodDays,
  minTotal: string,
  after: number,
): FragmentSqlToken {
  return sql.fragment`
    SELECT m.unit_id AS donor_id FROM giving_months m
    WHERE m.institution_id = ${institutionId} AND m.level = 'donor'
      AND m.month BETWEEN ${days.start}::date AND ${days.end}::date AND m.unit_id > ${after}
    GROUP BY m.unit_id HAVING sum(m.total) > ${minTotal}::numeric`;
}

/** How many donors a run over the period would issue to. */
export function countQualifying(
  db: CommonQueryMethods,
  institutionId: number,
  days: PeriodDays,
  minTotal: string,
): Promise<number> {
  return db.oneFirst(sql.type(z.object({ count: z.number() }))`
    SELECT count(*)::int AS count FROM (${qualifying(institutionId, days, minTotal, 0)}) q`);
}

/** The next donors of a run after `after`, in id order. */
export function nextQualifying(
  db: CommonQueryMethods,
  institutionId: number,
  days: PeriodDays,
  minTotal: string,
  after: number,
  limit: number,
): Promise<readonly number[]> {
  return db.anyFirst(sql.type(z.object({ donor_id: z.number() }))`
    ${qualifying(institutionId, days, minTotal, after)} ORDER BY m.unit_id LIMIT ${limit}`);
}
