import { sql, type CommonQueryMethods, type FragmentSqlToken } from 'slonik';
import { z } from 'zod';
import { liveAwardStatuses } from '../awards/schema.js';
import {
  fundRow,
  fundTotalsRow,
  type FundFields,
  type FundRow,
  type FundTotalsRow,
} from './schema.js';

export const columns = sql.fragment`
  id, name, code, description, restriction, endowed, award_limit, status, created_at, updated_at`;

const limitValue = (limit: FundFields['award_limit']) => (limit === null ? null : String(limit));

export function findFund(
  db: CommonQueryMethods,
  institutionId: number,
  id: number,
  lock: FragmentSqlToken = sql.fragment``,
): Promise<FundRow | null> {
  return db.maybeOne(sql.type(fundRow)`
    SELECT ${columns} FROM funds WHERE institution_id = ${institutionId} AND id = ${id} ${lock}`);
}

export function insertFund(
  db: CommonQueryMethods,
  institutionId: number,
  fund: FundFields,
): Promise<FundRow> {
  return db.one(sql.type(fundRow)`
    INSERT INTO funds (institution_id, name, code, description, restriction, endowed, award_limit, status)
    VALUES (${institutionId}, ${fund.name}, ${fund.code}, ${fund.description}, ${fund.restriction},
            ${fund.endowed}, ${limitValue(fund.award_limit)}::numeric, ${fund.status})
    RETURNING ${columns}`);
}

export function updateFund(
  db: CommonQueryMethods,
  institutionId: number,
  id: number,
  fund: FundFields,
): Promise<FundRow> {
  return db.one(sql.type(fundRow)`
    UPDATE funds SET name = ${fund.name}, code = ${fund.code}, description = ${fund.description},
      restriction = ${fund.restriction}, endowed = ${fund.endowed},
      award_limit = ${limitValue(fund.award_limit)}::numeric, status = ${fund.status}, updated_at = now()
    WHERE institution_id = ${institutionId} AND id = ${id}
    RETURNING ${columns}`);
}

/** Live awards reach a fund through their scholarship. */
const liveAwardsOfFund = (institutionId: number, fundId: number) => sql.fragment`
  awards a JOIN scholarships s ON s.institution_id = a.institution_id AND s.id = a.scholarship_id
  WHERE a.institution_id = ${institutionId} AND s.fund_id = ${fundId}
    AND a.status = ANY(${sql.array([...liveAwardStatuses], 'text')})`;

/** What the fund's live awards commit, as exact numeric text, leaving out one award if named. */
export function committedAwards(
  db: CommonQueryMethods,
  institutionId: number,
  fundId: number,
  exceptAwardId: number | null = null,
): Promise<string> {
  return db.oneFirst(sql.type(z.object({ committed: z.string() }))`
    SELECT coalesce(sum(a.amount), 0)::text AS committed
    FROM ${liveAwardsOfFund(institutionId, fundId)} AND a.id IS DISTINCT FROM ${exceptAwardId}`);
}

/** Gifts designated to the fund, its live awards and what its limit leaves, as exact text. */
export function findFundTotals(
  db: CommonQueryMethods,
  institutionId: number,
  fundId: number,
): Promise<FundTotalsRow> {
  return db.one(sql.type(fundTotalsRow)`
    SELECT gifts.received::text AS gifts_received, awards.committed::text AS awards_committed,
           (f.award_limit - awards.committed)::text AS award_capacity_remaining
    FROM funds f,
      LATERAL (SELECT coalesce(sum(amount), 0) AS received FROM gifts
               WHERE institution_id = ${institutionId} AND fund_id = ${fundId}) gifts,
      LATERAL (SELECT coalesce(sum(a.amount), 0) AS committed
               FROM ${liveAwardsOfFund(institutionId, fundId)}) awards
    WHERE f.institution_id = ${institutionId} AND f.id = ${fundId}`);
}
