import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { fiscalYearStartDay } from '../../reports/fiscalYear.js';
import { toCents } from '../../money.js';
import { columnsOf } from '../table.js';
import {
  givingStatementTable,
  type GivingStatementFields,
  type GivingStatementRow,
  type StatementLine,
  type StatementPeriod,
  type StatementTotal,
} from './schema.js';

/** The first and last day of a statement's period, YYYY-MM-DD. */
export interface PeriodDays {
  start: string;
  end: string;
}

/** The day before `day` (YYYY-MM-DD), in the proleptic Gregorian calendar. */
function dayBefore(day: string): string {
  const date = new Date(`${day}T00:00:00Z`);
  date.setUTCDate(date.getUTCDate() - 1);
  return date.toISOString().slice(0, 10);
}

/**
 * The days of a calendar year, or of a fiscal year named by the year it ends in (fundraising.md
 * §5) for the institution's start month.
 */
export function periodDays(period: StatementPeriod, year: number, startMonth: number): PeriodDays {
  if (period === 'calendar' || startMonth === 1)
    return { start: `${year}-01-01`, end: `${year}-12-31` };
  const start = fiscalYearStartDay(startMonth, year);
  return { start, end: dayBefore(fiscalYearStartDay(startMonth, year + 1)) };
}

/** A counted gift as read for a statement: money as exact decimal text. */
export const countedGiftRow = z.object({
  gift_id: z.number(),
  gift_date: z.string(),
  receipt_number: z.number().nullable(),
  currency: z.string(),
  type: z.string(),
  net_amount: z.string(),
  benefit_amount: z.string(),
  base_net: z.string(),
});
export type CountedGiftRow = z.infer<typeof countedGiftRow>;

/**
 * The donor's gifts that count in the period (fundraising.md §5: hard credit, not voided, net of
 * refunds above 0 in the base currency), by date. Soft credits are other donors' gifts and
 * pledge commitments live in another table, so neither is read.
 */
export function countedGifts(
  db: CommonQueryMethods,
  institutionId: number,
  donorId: number,
  days: PeriodDays,
): Promise<readonly CountedGiftRow[]> {
  // The donor's gifts first, by the donor's index: planned on the date range, a statement
  // would read every gift of the institution's year to find one donor's.
  return db.any(sql.type(countedGiftRow)`
    WITH mine AS MATERIALIZED (
      SELECT id, gift_date, currency, type, amount, amount_refunded, benefit_amount, status,
             base_amount, base_amount_refunded
      FROM gifts WHERE institution_id = ${institutionId} AND donor_id = ${donorId})
    SELECT g.id AS gift_id, g.gift_date::text AS gift_date, r.number AS receipt_number,
           g.currency::text AS currency, g.type,
           (g.amount - g.amount_refunded)::text AS net_amount,
           g.benefit_amount::text AS benefit_amount,
           giving_net(g.status, g.base_amount, g.base_amount_refunded)::text AS base_net
    FROM mine g
    LEFT JOIN receipts r
      ON r.institution_id = ${institutionId} AND r.gift_id = g.id AND r.status = 'issued'
    WHERE g.gift_date BETWEEN ${days.start}::date AND ${days.end}::date
      AND giving_net(g.status, g.base_amount, g.base_amount_refunded) IS NOT NULL
    ORDER BY g.gift_date, g.id`);
}

/** Cents as exact decimal text ("1234.50"). */
export const centsText = (cents: bigint) =>
  `${cents / 100n}.${String(cents % 100n).padStart(2, '0')}`;

/**
 * A statement's money from its counted gifts: each line net of refunds with its deductible part
 * (nothing of an in-kind gift, whose value the donor declares; nothing below 0), the totals per
 * currency, and the base total that reports count.
 */
export function statementMoney(gifts: readonly CountedGiftRow[]): {
  lines: StatementLine[];
  totals: StatementTotal[];
  base_total: string;
} {
  const byCurrency = new Map<string, { amount: bigint; deductible: bigint }>();
  let base = 0n;
  const lines = gifts.map((gift): StatementLine => {
    const amount = toCents(gift.net_amount);
    const benefit = toCents(gift.benefit_amount);
    const deductible = gift.type === 'in_kind' || benefit >= amount ? 0n : amount - benefit;
    const total = byCurrency.get(gift.currency) ?? { amount: 0n, deductible: 0n };
    total.amount += amount;
    total.deductible += deductible;
    byCurrency.set(gift.currency, total);
    base += toCents(gift.base_net);
    return {
      gift_id: gift.gift_id,
      gift_date: gift.gift_date,
      receipt_number: gift.receipt_number,
      currency: gift.currency,
      amount: centsText(amount),
      benefit_amount: centsText(benefit),
      deductible_amount: centsText(deductible),
    };
  });
  const totals = [...byCurrency.entries()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([currency, total]) => ({
      currency,
      amount: centsText(total.amount),
      deductible_amount: centsText(total.deductible),
    }));
  return { lines, totals, base_total: centsText(base) };
}

const takenRow = z.object({ seq: z.number(), id: z.number() });

/**
 * Issues the statement with the next number of its year, superseding the donor's current one of
 * the same period. The number is taken first: the row lock on the institution's year orders every
 * issue of that year, so the current statement read after it is the one the last issue left, and
 * two issues for one donor never both find none. A rollback gives the number back, where a
 * sequence would skip it. The caller runs this once every check has passed.
 */
export async function issueStatement(
  db: CommonQueryMethods,
  institutionId: number,
  fields: GivingStatementFields,
): Promise<GivingStatementRow> {
  const { seq, id } = await db.one(sql.type(takenRow)`
    INSERT INTO giving_statement_numbers AS n (institution_id, year, last_number)
    VALUES (${institutionId}, ${fields.year}, 1)
    ON CONFLICT (institution_id, year) DO UPDATE SET last_number = n.last_number + 1
    RETURNING last_number AS seq,
      nextval(pg_get_serial_sequence('giving_statements', 'id')) AS id`);
  // The new row's id is known before its insert, so that the current one can name it: its
  // foreign key is checked at commit, when the new row is there.
  await db.query(sql.unsafe`
    UPDATE giving_statements
    SET status = 'superseded', superseded_by_id = ${id}, updated_at = now()
    WHERE institution_id = ${institutionId} AND donor_id = ${fields.donor_id}
      AND period = ${fields.period} AND year = ${fields.year} AND status = 'issued'`);
  return (await db.one(sql.type(givingStatementTable.row)`
    INSERT INTO giving_statements (id, institution_id, year, seq, donor_id, period, period_start,
      period_end, run_id, donor_name, donor_address, currency, lines, totals, base_total,
      issued_on)
    OVERRIDING SYSTEM VALUE
    VALUES (${id}, ${institutionId}, ${fields.year}, ${seq}, ${fields.donor_id}, ${fields.period},
      ${fields.period_start}::date, ${fields.period_end}::date, ${fields.run_id},
      ${fields.donor_name},
      ${fields.donor_address ? sql.jsonb(fields.donor_address) : null}::jsonb,
      ${fields.currency}, ${sql.jsonb(fields.lines)}, ${sql.jsonb(fields.totals)},
      ${fields.base_total}::numeric, ${fields.issued_on}::date)
    RETURNING ${columnsOf(givingStatementTable)}`)) as GivingStatementRow;
}

/** Whether the donor was ever issued a statement (which keeps the donor from being deleted). */
export function donorHasStatements(
  db: CommonQueryMethods,
  institutionId: number,
  donorId: number,
): Promise<boolean> {
  return db.exists(sql.unsafe`
    SELECT 1 FROM giving_statements
    WHERE institution_id = ${institutionId} AND donor_id = ${donorId}`);
}
