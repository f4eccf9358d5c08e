import { sql, type FragmentSqlToken } from 'slonik';
import { errors } from '../errors.js';

/**
 * Fiscal years (fundraising.md §5) are named by the calendar year they end in: with
 * `fiscal_year_start_month` 7, fiscal year 2027 runs from 2026-07-01 to 2027-06-30; with 1 it is
 * the calendar year. The start month is read in the statement that uses it, so a change of the
 * setting changes the next answer.
 */

/** The first day of fiscal year `year` of the institution, as a SQL date. */
export function fiscalYearStart(institutionId: number, year: number): FragmentSqlToken {
  return sql.fragment`(SELECT make_date(${year}::int - (fiscal_year_start_month <> 1)::int,
                                        fiscal_year_start_month, 1)
                       FROM institutions WHERE id = ${institutionId})`;
}

/** The first day (YYYY-MM-DD) of fiscal year `year` for a start month. */
export function fiscalYearStartDay(startMonth: number, year: number): string {
  const startYear = startMonth === 1 ? year : year - 1;
  return `${String(startYear).padStart(4, '0')}-${String(startMonth).padStart(2, '0')}-01`;
}

/** The fiscal year (its end year) a date or month falls in, given the start month. */
export function fiscalYearOf(date: FragmentSqlToken, startMonth: FragmentSqlToken) {
  return sql.fragment`extract(year FROM ${date} + make_interval(months => (13 - ${startMonth}) % 12))::int`;
}

/** The fiscal year `day` (YYYY-MM-DD) falls in, for a start month. */
export function fiscalYearOfDay(day: string, startMonth: number): number {
  const [year, month] = day.split('-').map(Number) as [number, number];
  return startMonth !== 1 && month >= startMonth ? year + 1 : year;
}

/** Fiscal years a report accepts: four digits, with a year before and after it. */
const YEAR = /^\d{4}$/;

/** `fiscal_year`: an integer year, normalised (the cursor pins it). */
export function parseFiscalYear(param: string, raw: string): string {
  const year = YEAR.test(raw) ? Number(raw) : NaN;
  if (!(year >= 1001 && year <= 9998))
    throw errors.invalidParameter(
      param,
      `${param} must be a fiscal year, the calendar year it ends in, such as 2027.`,
    );
  return String(year);
}

export const LEVELS = ['donor', 'household'] as const;
export type Level = (typeof LEVELS)[number];

/** `level`: `donor` (the default) or `household`. */
export function parseLevel(param: string, raw: string): Level {
  if (!(LEVELS as readonly string[]).includes(raw))
    throw errors.invalidParameter(param, `${param} must be one of: ${LEVELS.join(', ')}.`);
  return raw as Level;
}

/**
 * The donors whose gifts a unit counts: at `donor` level the donor itself, at `household` level
 * the household (or a donor in none) and its current members.
 */
export function unitDonors(
  institutionId: number,
  level: Level,
  unit: FragmentSqlToken,
): FragmentSqlToken {
  return level === 'donor'
    ? sql.fragment`ARRAY[${unit}]::bigint[]`
    : sql.fragment`ARRAY(SELECT u.id FROM donors u WHERE u.institution_id = ${institutionId}
                           AND (u.id = ${unit} OR u.household_id = ${unit}))`;
}

/** A gift that counts (the giving_net of migration 1735020000000_giving-months.sql). */
export const countedGift = (gift: FragmentSqlToken) =>
  sql.fragment`giving_net(${gift}.status, ${gift}.base_amount, ${gift}.base_amount_refunded)`;
