import { sql, type CommonQueryMethods, type FragmentSqlToken } from 'slonik';
import { fundRow, type FundFields, type FundRow } from './schema.js';

const columns = sql.fragment`
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
