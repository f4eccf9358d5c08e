import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { today } from '../clock.js';
import type { JsonObject } from '../json.js';
import {
  countedGift,
  fiscalYearOf,
  fiscalYearOfDay,
  unitDonors,
  type Level,
} from './fiscalYear.js';

const yearRow = z.object({ fiscal_year: z.number(), total: z.string(), gift_count: z.number() });

const summaryRow = z.object({
  start_month: z.number(),
  years: z.array(yearRow),
  lifetime_total: z.string(),
  first_gift_date: z.string().nullable(),
  last_gift_date: z.string().nullable(),
  largest_gift: z.string().nullable(),
});

/**
 * Fiscal years given in a row, ending with the current fiscal year, or with the one before when
 * nothing has counted yet this year (a donor who gives every December is not lapsed in June).
 */
export function consecutiveYears(years: readonly number[], current: number): number {
  const given = new Set(years);
  let year = given.has(current) ? current : current - 1;
  let run = 0;
  while (given.has(year)) {
    run += 1;
    year -= 1;
  }
  return run;
}

/**
 * `GET /donors/{id}/giving-summary` (fundraising.md §5): the donor's (or at `household` level
 * its household's) counted giving by fiscal year, from giving_months, and its first, last and
 * largest counted gift from its gifts. Null when the institution has no such donor.
 */
export async function findGivingSummary(
  db: CommonQueryMethods,
  institutionId: number,
  donorId: number,
  level: Level,
): Promise<JsonObject | null> {
  const unit =
    level === 'household' ? sql.fragment`coalesce(d.household_id, d.id)` : sql.fragment`d.id`;
  const startMonth = sql.fragment`i.fiscal_year_start_month`;
  // One statement, so that the years and the gifts are read in one snapshot.
  const found = await db.maybeOne(sql.type(summaryRow)`
    SELECT i.fiscal_year_start_month AS start_month, years.years, years.lifetime_total,
           facts.first_gift_date, facts.last_gift_date, facts.largest_gift
    FROM donors d
    JOIN institutions i ON i.id = d.institution_id
    CROSS JOIN LATERAL (
      SELECT coalesce(json_agg(y ORDER BY y.fiscal_year), '[]') AS years,
             coalesce(sum(y.total::numeric), 0)::text AS lifetime_total
      FROM (SELECT ${fiscalYearOf(sql.fragment`m.month`, startMonth)} AS fiscal_year,
                   sum(m.total)::text AS total, sum(m.gift_count)::int AS gift_count
            FROM giving_months m
            WHERE m.institution_id = d.institution_id AND m.level = ${level}
              AND m.unit_id = ${unit}
            GROUP BY 1) y) years
    CROSS JOIN LATERAL (
      SELECT min(g.gift_date)::text AS first_gift_date, max(g.gift_date)::text AS last_gift_date,
             max(${countedGift(sql.fragment`g`)})::text AS largest_gift
      FROM gifts g
      WHERE g.institution_id = d.institution_id
        AND g.donor_id = ANY(${unitDonors(institutionId, level, unit)})
        AND ${countedGift(sql.fragment`g`)} IS NOT NULL) facts
    WHERE d.institution_id = ${institutionId} AND d.id = ${donorId}`);
  if (!found) return null;

  const byYear = found.years.map((year) => ({
    fiscal_year: year.fiscal_year,
    total: Number(year.total),
    gift_count: year.gift_count,
  }));
  const best = byYear.reduce<(typeof byYear)[number] | null>(
    (found, year) => (found === null || year.total > found.total ? year : found),
    null,
  );
  return {
    object: 'giving_summary',
    donor_id: donorId,
    level,
    lifetime_total: Number(found.lifetime_total),
    first_gift_date: found.first_gift_date,
    last_gift_date: found.last_gift_date,
    largest_gift: found.largest_gift === null ? null : Number(found.largest_gift),
    years_given: byYear.length,
    consecutive_years: consecutiveYears(
      byYear.map((year) => year.fiscal_year),
      fiscalYearOfDay(today(), found.start_month),
    ),
    best_year: best && { fiscal_year: best.fiscal_year, total: best.total },
    by_fiscal_year: byYear,
  };
}

export const givingSummaryResponse = z
  .object({
    object: z.literal('giving_summary'),
    donor_id: z.number().int(),
    level: z.enum(['donor', 'household']),
    lifetime_total: z.number().meta({ description: 'Every counted gift, in all.' }),
    first_gift_date: z.string().nullable().meta({ format: 'date' }),
    last_gift_date: z.string().nullable().meta({ format: 'date' }),
    largest_gift: z
      .number()
      .nullable()
      .meta({ description: 'The largest counted gift’s base amount net of refunds.' }),
    years_given: z.number().int().meta({ description: 'Fiscal years with a counted gift.' }),
    consecutive_years: z.number().int().meta({
      description:
        'Fiscal years given in a row, ending with the current fiscal year, or with the one before when nothing has counted yet this year; 0 when neither counted.',
    }),
    best_year: z
      .object({ fiscal_year: z.number().int(), total: z.number() })
      .nullable()
      .meta({ description: 'The fiscal year with the largest total (the earliest of equals).' }),
    by_fiscal_year: z
      .array(
        z.object({
          fiscal_year: z.number().int(),
          total: z.number(),
          gift_count: z.number().int(),
        }),
      )
      // One per fiscal year a gift date can fall in.
      .max(10_000)
      .meta({ description: 'Each fiscal year with a counted gift, oldest first.' }),
  })
  .meta({
    description:
      'A donor’s counted giving by fiscal year, in the institution’s base currency: each gift’s base amount net of refunds; voided and fully refunded gifts count nothing, nor do pledges (their payments count). At `level=household` the donor’s household (or the donor, in none) with its current members, each gift once.',
  });
