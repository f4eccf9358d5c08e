import { sql, type CommonQueryMethods, type FragmentSqlToken } from 'slonik';
import { z } from 'zod';
import { liveAwardStatuses, type AwardFields } from './schema.js';

/** The status of an award cycle of the institution, or null when there is none. */
export function awardCycleStatus(
  db: CommonQueryMethods,
  institutionId: number,
  cycleId: number,
  lock: FragmentSqlToken = sql.fragment``,
): Promise<string | null> {
  return db.maybeOneFirst(sql.type(z.object({ status: z.string() }))`
    SELECT status FROM award_cycles WHERE institution_id = ${institutionId} AND id = ${cycleId} ${lock}`);
}

/** The fund a scholarship of the institution draws on, or null when there is none. */
export function scholarshipFundId(
  db: CommonQueryMethods,
  institutionId: number,
  scholarshipId: number,
  lock: FragmentSqlToken = sql.fragment``,
): Promise<number | null> {
  return db.maybeOneFirst(sql.type(z.object({ fund_id: z.number() }))`
    SELECT fund_id FROM scholarships
    WHERE institution_id = ${institutionId} AND id = ${scholarshipId} ${lock}`);
}

/** Whether another live award already gives this student this scholarship in this cycle. */
export function hasLiveAward(
  db: CommonQueryMethods,
  institutionId: number,
  award: Pick<AwardFields, 'award_cycle_id' | 'scholarship_id' | 'student_id'>,
  exceptId: number | null,
): Promise<boolean> {
  return db.exists(sql.unsafe`
    SELECT 1 FROM awards
    WHERE institution_id = ${institutionId} AND award_cycle_id = ${award.award_cycle_id}
      AND scholarship_id = ${award.scholarship_id} AND student_id = ${award.student_id}
      AND status = ANY(${sql.array([...liveAwardStatuses], 'text')})
      AND id IS DISTINCT FROM ${exceptId}`);
}
