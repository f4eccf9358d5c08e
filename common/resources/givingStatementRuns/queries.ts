import { sql, type CommonQueryMethods, type FragmentSqlToken } from 'slonik';
import { z } from 'zod';
import type { PeriodDays } from '../givingStatements/queries.js';
import { toCents } from '../../money.js';

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

const monthRow = z.object({ unit_id: z.number(), total: z.string() });

/**
 * The next donors of a run after `after`, in id order. Read as the donors' month rows in key
 * order, a bounded slice at a time, and added up here: a GROUP BY over every donor after `after`
 * would cost the rest of the run at every step.
 */
export async function nextQualifying(
  db: CommonQueryMethods,
  institutionId: number,
  days: PeriodDays,
  minTotal: string,
  after: number,
  limit: number,
): Promise<readonly number[]> {
  const floor = toCents(minTotal);
  // A donor has at most 12 month rows in a period.
  const slice = limit * 12 + 12;
  const found: number[] = [];
  let from = after;
  for (;;) {
    const rows = await db.any(sql.type(monthRow)`
      SELECT m.unit_id, m.total::text AS total FROM giving_months m
      WHERE m.institution_id = ${institutionId} AND m.level = 'donor' AND m.unit_id > ${from}
        AND m.month BETWEEN ${days.start}::date AND ${days.end}::date
      ORDER BY m.unit_id, m.month LIMIT ${slice}`);
    const complete = rows.length < slice;
    const totals = new Map<number, bigint>();
    for (const row of rows)
      totals.set(row.unit_id, (totals.get(row.unit_id) ?? 0n) + toCents(row.total));
    // The slice may end part-way through its last donor's months: that donor is read next time.
    if (!complete) totals.delete(rows.at(-1)!.unit_id);
    for (const [donorId, total] of totals) {
      if (total > floor) found.push(donorId);
      if (found.length === limit) return found;
    }
    if (complete || totals.size === 0) return found;
    from = Math.max(...totals.keys());
  }
}
