import { sql, type FragmentSqlToken } from 'slonik';
import { z } from 'zod';
import type { FilterSpec, ListSpec } from '../pagination/listSpec.js';
import { displayName } from '../resources/donors/present.js';
import {
  countedGift,
  fiscalYearOf,
  fiscalYearStart,
  parseFiscalYear,
  parseLevel,
  unitDonors,
  type Level,
} from './fiscalYear.js';

/**
 * LYBUNT, SYBUNT and first-time donors (fundraising.md §5): cursor lists of donors (or
 * households), newest donor first, each computed when asked from giving_months (migration
 * 1735020000000_giving-months.sql), the counted giving of every donor and household per calendar
 * month, which the writes keep current. A unit "counted" in a fiscal year when it has a row in
 * one of the year's months (every row has gifts).
 *
 * Each report groups the institution's rows of the months it needs by unit, in the order of
 * the table's key (institution, level, unit, month), and keeps the units its condition
 * describes: a page reads the rows of the units it walks past, not the whole table.
 */

const reportRow = z.object({
  institution_id: z.number(),
  donor_id: z.number(),
  role: z.string(),
  first_name: z.string().nullable(),
  last_name: z.string().nullable(),
  organization_name: z.string().nullable(),
  fiscal_year_total: z.string(),
  previous_year_total: z.string(),
  lifetime_total: z.string(),
  last_gift_date: z.string(),
  last_counted_year: z.number(),
});
type ReportRow = z.infer<typeof reportRow>;

export const fiscalYearFilter: FilterSpec = {
  shapesSource: true,
  description: { kind: 'pattern', pattern: '^\\d{4}$', example: '2027' },
  parse: parseFiscalYear,
  condition: () => sql.fragment`true`,
};

export const levelFilter: FilterSpec = {
  shapesSource: true,
  description: { kind: 'enum', values: ['donor', 'household'] },
  parse: parseLevel,
  condition: () => sql.fragment`true`,
};

/** The first days of fiscal years Y−1, Y and Y+1. */
interface Bounds {
  previous: FragmentSqlToken;
  current: FragmentSqlToken;
  next: FragmentSqlToken;
}

/**
 * A unit's months as the reports see them (`r`): `last_month` and `first_month`, its last and
 * first counted months before the end of fiscal year Y, and the month it first counted ever.
 */
type Condition = (bounds: Bounds) => FragmentSqlToken;

/**
 * The report's rows: the institution's units, newest first, each with its months aggregated
 * (a few rows of giving_months, read by its key) and kept when `condition` holds: a page walks
 * the units from its position and stops when it is full, whatever the institution's size.
 * Units are donors at `donor` level; at `household` level, donors in no household (households
 * among them), whose rows count their members'.
 */
function reportSource(condition: Condition) {
  return (filters: Readonly<Record<string, string>>, institutionId: number): FragmentSqlToken => {
    const year = Number(filters.fiscal_year);
    const level: Level = filters.level === 'household' ? 'household' : 'donor';
    const bounds: Bounds = {
      previous: fiscalYearStart(institutionId, year - 1),
      current: fiscalYearStart(institutionId, year),
      next: fiscalYearStart(institutionId, year + 1),
    };
    const startMonth = sql.fragment`(SELECT fiscal_year_start_month FROM institutions
                                     WHERE id = ${institutionId})`;
    return sql.fragment`(
      SELECT d.institution_id, d.id AS donor_id,
             d.role, d.first_name, d.last_name, d.organization_name,
             r.fiscal_year_total::text, r.previous_year_total::text, r.lifetime_total::text,
             (SELECT max(g.gift_date) FROM gifts g
              WHERE g.institution_id = d.institution_id
                AND g.donor_id = ANY(${unitDonors(institutionId, level, sql.fragment`d.id`)})
                AND ${countedGift(sql.fragment`g`)} IS NOT NULL)::text AS last_gift_date,
             ${fiscalYearOf(sql.fragment`r.last_month`, startMonth)} AS last_counted_year
      FROM donors d
      CROSS JOIN LATERAL (
        SELECT max(m.month) FILTER (WHERE m.month < ${bounds.next}) AS last_month,
               min(m.month) AS first_month,
               coalesce(sum(m.total) FILTER (WHERE m.month >= ${bounds.current}
                                               AND m.month < ${bounds.next}), 0)
                 AS fiscal_year_total,
               coalesce(sum(m.total) FILTER (WHERE m.month >= ${bounds.previous}
                                               AND m.month < ${bounds.current}), 0)
                 AS previous_year_total,
               sum(m.total) AS lifetime_total
        FROM giving_months m
        WHERE m.institution_id = d.institution_id AND m.level = ${level} AND m.unit_id = d.id) r
      WHERE d.status <> 'erased' AND ${level === 'household' ? sql.fragment`d.household_id IS NULL AND ` : sql.fragment``}${condition(bounds)}
    ) AS report`;
  };
}

function reportList(name: string, condition: Condition): ListSpec<ReportRow> {
  return {
    endpoint: `/api/v1/reports/${name}`,
    from: sql.fragment`report`,
    source: reportSource(condition),
    institutionColumn: sql.fragment`report.institution_id`,
    key: sql.fragment`report.donor_id`,
    columns: sql.fragment`report.*`,
    row: reportRow,
    keyOf: (row) => row.donor_id,
    present: (row) => ({
      object: 'report_row',
      donor_id: row.donor_id,
      display_name: displayName({
        role: row.role as 'Individual',
        first_name: row.first_name,
        last_name: row.last_name,
        organization_name: row.organization_name,
      }),
      last_gift_date: row.last_gift_date,
      fiscal_year_total: Number(row.fiscal_year_total),
      previous_year_total: Number(row.previous_year_total),
      lifetime_total: Number(row.lifetime_total),
      ...(name === 'sybunt' ? { last_counted_year: row.last_counted_year } : {}),
    }),
    filters: { fiscal_year: fiscalYearFilter, level: levelFilter },
    required: ['fiscal_year'],
  };
}

/** Counted in Y−1 and not in Y. */
export const lybuntList = reportList(
  'lybunt',
  ({ previous, current }) =>
    sql.fragment`r.last_month >= ${previous} AND r.last_month < ${current}`,
);

/** Counted in some year before Y−1, and in neither Y−1 nor Y. */
export const sybuntList = reportList(
  'sybunt',
  ({ previous }) => sql.fragment`r.last_month < ${previous}`,
);

/** Counted in Y for the first time ever. */
export const firstTimeDonorList = reportList(
  'first-time-donors',
  ({ current, next }) => sql.fragment`r.first_month >= ${current} AND r.first_month < ${next}`,
);

export const reportRowResponse = z
  .object({
    object: z.literal('report_row'),
    donor_id: z.number().int().meta({
      description:
        'The donor; at `level=household`, the household (or a donor in no household), its members counted in it.',
    }),
    display_name: z.string(),
    last_gift_date: z.string().meta({
      format: 'date',
      description:
        'The date of its latest counted gift, ever (it may fall after the fiscal year asked).',
    }),
    fiscal_year_total: z.number().meta({ description: 'What it gave in the fiscal year asked.' }),
    previous_year_total: z
      .number()
      .meta({ description: 'What it gave in the fiscal year before the one asked.' }),
    lifetime_total: z.number().meta({ description: 'What it has given in all, to date.' }),
  })
  .meta({
    description:
      'One donor of a fiscal-year report. Amounts are in the institution’s base currency and count each gift’s base amount net of refunds; voided and fully refunded gifts, and pledges (their payments count), count nothing.',
  });

export const sybuntRowResponse = reportRowResponse.extend({
  last_counted_year: z.number().int().meta({
    description: 'The last fiscal year it counted in (before the one before the year asked).',
  }),
});

/** The same row, its own schema for its own list's document. */
export const firstTimeDonorRowResponse = reportRowResponse.extend({});
