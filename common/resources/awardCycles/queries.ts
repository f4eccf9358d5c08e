import { sql, type CommonQueryMethods, type FragmentSqlToken } from 'slonik';
import { awardCycleRow, type AwardCycleFields, type AwardCycleRow } from './schema.js';

const columns = sql.fragment`
  id, name, starts_on::text AS starts_on, ends_on::text AS ends_on, status, created_at, updated_at`;

export function findAwardCycle(
  db: CommonQueryMethods,
  institutionId: number,
  id: number,
  lock: FragmentSqlToken = sql.fragment``,
): Promise<AwardCycleRow | null> {
  return db.maybeOne(sql.type(awardCycleRow)`
    SELECT ${columns} FROM award_cycles WHERE institution_id = ${institutionId} AND id = ${id} ${lock}`);
}

export function insertAwardCycle(
  db: CommonQueryMethods,
  institutionId: number,
  cycle: AwardCycleFields,
): Promise<AwardCycleRow> {
  return db.one(sql.type(awardCycleRow)`
    INSERT INTO award_cycles (institution_id, name, starts_on, ends_on, status)
    VALUES (${institutionId}, ${cycle.name}, ${cycle.starts_on}::date, ${cycle.ends_on}::date,
            ${cycle.status})
    RETURNING ${columns}`);
}

export function updateAwardCycle(
  db: CommonQueryMethods,
  institutionId: number,
  id: number,
  cycle: AwardCycleFields,
): Promise<AwardCycleRow> {
  return db.one(sql.type(awardCycleRow)`
    UPDATE award_cycles SET name = ${cycle.name}, starts_on = ${cycle.starts_on}::date,
      ends_on = ${cycle.ends_on}::date, status = ${cycle.status}, updated_at = now()
    WHERE institution_id = ${institutionId} AND id = ${id}
    RETURNING ${columns}`);
}
