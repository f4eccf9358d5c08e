import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { JsonObject } from '../json.js';
import { fiscalYearStartDay, type Level } from './fiscalYear.js';

const retentionRow = z.object({
  previous_donors: z.number(),
  retained: z.number(),
  new: z.number(),
  /** New in Y or recaptured: counted in Y and not in Y−1. */
  arrived: z.number(),
  lapsed: z.number(),
  upgraded: z.number(),
  downgraded: z.number(),
  unchanged: z.number(),
  previous_amount: z.string(),
  amount: z.string(),
});

/**
 * The units of a level are summed in this many ranges of unit ids, each grouped on its own: the
 * ranges share no unit, and every figure of the report is a sum over units, so the ranges' sums
 * add up to it. PostgreSQL may then run them side by side (a Parallel Append under one partial
 * aggregate: some 2x on two cores, one snapshot throughout); one range at a time, they cost what
 * one pass does. More ranges than processes keep a skewed range from holding the others up.
 */
const UNIT_RANGES = 8;

/**
 * `GET /reports/retention` (fundraising.md §5, the Fundraising Effectiveness Project's
 * definitions): each unit that counted in Y−1 or Y, with its totals in both from giving_years
 * (or, while those are bucketed by another start month, from giving_months), and the units new
 * in Y from giving_first_months.
 */
export async function findRetention(
  db: CommonQueryMethods,
  institutionId: number,
  year: number,
  level: Level,
): Promise<JsonObject> {
  // One transaction: the start month, the ranges and the figures come from one moment of the
  // data (REPEATABLE READ: each statement of a READ COMMITTED one would read its own), and the
  // statements run without JIT, whose compilation (its cost passes the threshold at some 100,000
  // units) took longer than it saved, at every request.
  const row = await db.transaction(async (transaction) => {
    await transaction.query(sql.unsafe`SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY`);
    await transaction.query(sql.unsafe`SET LOCAL jit = off`);
    // The bounds as dates, not subqueries, so that the planner sees how many months they hold
    // (it reads the key's index in order, not the whole table): the start month is read first,
    // with the level's lowest and highest unit (two probes of the key's index).
    const {
      month: startMonth,
      years_month: yearsMonth,
      low,
      high,
    } = await transaction.one(sql.type(
      z.object({
        month: z.number(),
        years_month: z.number(),
        low: z.coerce.number().nullable(),
        high: z.coerce.number().nullable(),
      }),
    )`
      SELECT fiscal_year_start_month AS month, giving_years_start_month AS years_month,
             (SELECT min(unit_id) FROM giving_months
              WHERE institution_id = ${institutionId} AND level = ${level}) AS low,
             (SELECT max(unit_id) FROM giving_months
              WHERE institution_id = ${institutionId} AND level = ${level}) AS high
      FROM institutions WHERE id = ${institutionId}`);
    const day = (fiscalYear: number) =>
      sql.fragment`${fiscalYearStartDay(startMonth, fiscalYear)}::date`;
    const [previous, current, next] = [day(year - 1), day(year), day(year + 1)];
    // A unit counted in Y and not in Y−1 is new when its first month ever falls in Y
    // (giving_first_months, a range of one index), else recaptured: no unit is looked up on its
    // own.
    const units = await transaction.oneFirst(sql.type(z.object({ new: z.number() }))`
      SELECT count(*)::int AS new FROM giving_first_months f
      WHERE f.institution_id + 0 = ${institutionId} AND f.level = ${level}
        AND f.month >= ${current} AND f.month < ${next}`);
    // Each range read from the key's index alone. Offered bitmap scans, the planner sometimes
    // (on statistics of pages not yet marked all-visible) read each range's rows from the table
    // and sorted them: 3x slower.
    await transaction.query(sql.unsafe`SET LOCAL enable_bitmapscan = off`);
    const inRange = (from: number, to: number, alias: 'y' | 'm') => {
      const row = sql.identifier([alias]);
      return sql.fragment`${row}.institution_id = ${institutionId} AND ${row}.level = ${level}
        AND ${row}.unit_id >= ${from} AND ${row}.unit_id < ${to}`;
    };
    // The years' rows where they are bucketed by today's start month: each unit's two totals
    // from a row each, side by side. Otherwise (the start month changed, and the worker has not
    // yet built the years again) the months of the two years, grouped per unit.
    const yearsHold = yearsMonth === startMonth;
    const yearOf = (fiscalYear: number, from: number, to: number) => sql.fragment`(
      SELECT y.unit_id, y.total FROM giving_years y
      WHERE ${inRange(from, to, 'y')} AND y.fiscal_year = ${fiscalYear})`;
    const ranges = unitRanges(low ?? 0, high ?? 0).map(([from, to]) =>
      yearsHold
        ? sql.fragment`(
            SELECT p.total AS previous_total, c.total AS total
            FROM ${yearOf(year - 1, from, to)} p
            FULL JOIN ${yearOf(year, from, to)} c USING (unit_id))`
        : sql.fragment`(
            SELECT sum(m.total) FILTER (WHERE m.month < ${current}) AS previous_total,
                   sum(m.total) FILTER (WHERE m.month >= ${current}) AS total
            FROM giving_months m
            WHERE ${inRange(from, to, 'm')} AND m.month >= ${previous} AND m.month < ${next}
            GROUP BY m.unit_id)`,
    );
    const figures = await transaction.one(sql.type(retentionRow.omit({ new: true }))`
      SELECT count(u.previous_total)::int AS previous_donors,
             count(*) FILTER (WHERE u.previous_total IS NOT NULL AND u.total IS NOT NULL)::int
               AS retained,
             count(*) FILTER (WHERE u.previous_total IS NULL)::int AS arrived,
             count(*) FILTER (WHERE u.total IS NULL)::int AS lapsed,
             count(*) FILTER (WHERE u.total > u.previous_total)::int AS upgraded,
             count(*) FILTER (WHERE u.total < u.previous_total)::int AS downgraded,
             count(*) FILTER (WHERE u.total = u.previous_total)::int AS unchanged,
             coalesce(sum(u.previous_total), 0)::text AS previous_amount,
             coalesce(sum(u.total), 0)::text AS amount
      FROM (${sql.join(ranges, sql.fragment` UNION ALL `)}) u`);
    return { ...figures, new: units };
  });
  const rate =
    row.previous_donors === 0
      ? null
      : Math.round((row.retained / row.previous_donors) * 10_000) / 10_000;
  return {
    object: 'retention',
    fiscal_year: year,
    level,
    previous_donors: row.previous_donors,
    retained: row.retained,
    retention_rate: rate,
    new: row.new,
    recaptured: row.arrived - row.new,
    lapsed: row.lapsed,
    upgraded: row.upgraded,
    downgraded: row.downgraded,
    unchanged: row.unchanged,
    previous_amount: Number(row.previous_amount),
    amount: Number(row.amount),
  };
}

/**
 * [from, to) bounds of UNIT_RANGES ranges of unit ids that cover low to high, each unit in one
 * (fewer where there are fewer ids than ranges).
 */
export function unitRanges(low: number, high: number): [number, number][] {
  const ids = high - low + 1;
  const count = Math.max(1, Math.min(UNIT_RANGES, ids));
  const bounds = Array.from({ length: count + 1 }, (_, index) =>
    index === count ? high + 1 : low + Math.floor((ids * index) / count),
  );
  return bounds.slice(0, -1).map((from, index) => [from, bounds[index + 1]!]);
}

const count = (description: string) => z.number().int().meta({ description });

export const retentionResponse = z
  .object({
    object: z.literal('retention'),
    fiscal_year: z.number().int(),
    level: z.enum(['donor', 'household']),
    previous_donors: count('Donors who counted in the fiscal year before.'),
    retained: count('Counted in the year before and in this year.'),
    retention_rate: z.number().nullable().meta({
      description: '`retained ÷ previous_donors`, to 4 decimals; null when `previous_donors` is 0.',
    }),
    new: count('Counted in this year for the first time ever.'),
    recaptured: count(
      'Counted in this year, not in the year before, and in some year before that.',
    ),
    lapsed: count('Counted in the year before, not in this year.'),
    upgraded: count('Retained, and gave more this year than the year before.'),
    downgraded: count('Retained, and gave less this year than the year before.'),
    unchanged: count('Retained, and gave the same in both years.'),
    previous_amount: z.number().meta({ description: 'The total counted in the year before.' }),
    amount: z.number().meta({ description: 'The total counted in this year.' }),
  })
  .meta({
    description:
      'Donor retention in a fiscal year, with the Fundraising Effectiveness Project’s definitions. A donor counts in a year with a counted gift in it (not voided, its base amount net of refunds above 0; pledges count through their payments only).',
  });
