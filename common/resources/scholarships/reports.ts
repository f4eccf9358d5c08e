import { sql } from 'slonik';
import { z } from 'zod';
import {
  idFilter,
  parseIdParameter,
  textSearch,
  type FilterSpec,
  type ListSpec,
} from '../../pagination/listSpec.js';

/**
 * Scholarship reporting (product.md §4). An award counts as awarded once the student has
 * accepted it, and stays so when it is disbursed; offered, declined and cancelled awards are
 * not reported. Both reports use this one definition, so a fund summary is exactly the sum of
 * the awarded-students rows of its fund.
 *
 * The condition is written as literal SQL (not a bound array) so that the planner can match it
 * to the partial indexes of migrations/1732500000000_scholarship-list-indexes.sql.
 */
const awarded = sql.fragment`a.status IN ('accepted', 'disbursed')`;

const awardedStudentRow = z.object({
  award_id: z.number(),
  award_cycle_id: z.number(),
  /** numeric(14,2) as exact text */
  amount: z.string(),
  status: z.enum(['accepted', 'disbursed']),
  student_id: z.number(),
  student_number: z.string(),
  student_first_name: z.string(),
  student_last_name: z.string(),
  student_email: z.string().nullable(),
  scholarship_id: z.number(),
  scholarship_name: z.string(),
  fund_id: z.number(),
  fund_code: z.string(),
  fund_name: z.string(),
});
type AwardedStudentRow = z.infer<typeof awardedStudentRow>;

/**
 * The stewardship report: awards drawn from a fund the donor gave to. A semi-join, so a donor
 * with many gifts to one fund still yields each award once.
 */
const donorFilter: FilterSpec = {
  parse: parseIdParameter,
  condition: (value) => sql.fragment`EXISTS (
    SELECT 1 FROM gifts g
    WHERE g.institution_id = a.institution_id AND g.donor_id = ${Number(value)}
      AND g.fund_ids <> '{}' AND g.fund_ids @> ARRAY[s.fund_id] AND g.status = 'posted')`,
};

/** `GET /scholarships/awarded-students`: one row per awarded award, newest award first. */
export const awardedStudentList: ListSpec<AwardedStudentRow> = {
  endpoint: '/api/v1/scholarships/awarded-students',
  from: sql.fragment`awards a
    JOIN scholarships s ON s.institution_id = a.institution_id AND s.id = a.scholarship_id
    JOIN students st ON st.institution_id = a.institution_id AND st.id = a.student_id
    JOIN funds f ON f.institution_id = s.institution_id AND f.id = s.fund_id`,
  institutionColumn: sql.fragment`a.institution_id`,
  where: awarded,
  key: sql.fragment`a.id`,
  columns: sql.fragment`
    a.id AS award_id, a.award_cycle_id, a.amount, a.status,
    st.id AS student_id, st.student_number, st.first_name AS student_first_name,
    st.last_name AS student_last_name, st.email AS student_email,
    s.id AS scholarship_id, s.name AS scholarship_name,
    f.id AS fund_id, f.code AS fund_code, f.name AS fund_name`,
  row: awardedStudentRow,
  keyOf: (row) => row.award_id,
  present: (row) => ({
    object: 'awarded_student',
    award_id: row.award_id,
    award_cycle_id: row.award_cycle_id,
    amount: Number(row.amount),
    status: row.status,
    student: {
      id: row.student_id,
      student_number: row.student_number,
      first_name: row.student_first_name,
      last_name: row.student_last_name,
      email: row.student_email,
    },
    scholarship: { id: row.scholarship_id, name: row.scholarship_name },
    fund: { id: row.fund_id, code: row.fund_code, name: row.fund_name },
  }),
  filters: {
    award_cycle_id: idFilter(sql.fragment`a.award_cycle_id`),
    fund_id: idFilter(sql.fragment`s.fund_id`),
    scholarship_id: idFilter(sql.fragment`a.scholarship_id`),
    donor_id: donorFilter,
    q: textSearch([
      sql.fragment`st.first_name || ' ' || st.last_name`,
      sql.fragment`st.student_number`,
    ]),
  },
  required: ['award_cycle_id'],
};

const fundSummaryRow = z.object({
  fund_id: z.number(),
  fund_code: z.string(),
  fund_name: z.string(),
  award_cycle_id: z.number(),
  awards_count: z.number(),
  students_count: z.number(),
  /** numeric sum as exact text */
  amount_awarded: z.string(),
});
type FundSummaryRow = z.infer<typeof fundSummaryRow>;

/**
 * `GET /scholarships/fund-summaries`: one row per fund with awarded awards in the cycle, newest
 * fund first. A keyset walk over the institution's funds, each with its own aggregate (a LATERAL
 * subquery over the fund's scholarships and their awards in the cycle); funds without any are
 * left out by the join condition. The required `award_cycle_id` filter pins the cycle row `c`
 * (of the same institution, so another institution's cycle gives an empty page), which keeps
 * one row per fund and so a total order on the fund id.
 */
export const fundSummaryList: ListSpec<FundSummaryRow> = {
  endpoint: '/api/v1/scholarships/fund-summaries',
  from: sql.fragment`funds f
    JOIN award_cycles c ON c.institution_id = f.institution_id
    JOIN LATERAL (
      SELECT count(*) AS awards_count, count(DISTINCT a.student_id) AS students_count,
        sum(a.amount)::text AS amount_awarded
      FROM scholarships s
      JOIN awards a ON a.institution_id = s.institution_id AND a.scholarship_id = s.id
      WHERE s.institution_id = f.institution_id AND s.fund_id = f.id
        AND a.award_cycle_id = c.id AND ${awarded}
    ) t ON t.awards_count > 0`,
  institutionColumn: sql.fragment`f.institution_id`,
  key: sql.fragment`f.id`,
  columns: sql.fragment`
    f.id AS fund_id, f.code AS fund_code, f.name AS fund_name, c.id AS award_cycle_id,
    t.awards_count, t.students_count, t.amount_awarded`,
  row: fundSummaryRow,
  keyOf: (row) => row.fund_id,
  present: (row) => ({
    object: 'fund_summary',
    fund: { id: row.fund_id, code: row.fund_code, name: row.fund_name },
    award_cycle_id: row.award_cycle_id,
    awards_count: row.awards_count,
    students_count: row.students_count,
    amount_awarded: Number(row.amount_awarded),
  }),
  filters: {
    award_cycle_id: idFilter(sql.fragment`c.id`),
  },
  required: ['award_cycle_id'],
};
