import { sql, type CommonQueryMethods, type FragmentSqlToken } from 'slonik';
import { z } from 'zod';
import { liveAwardStatuses } from '../awards/schema.js';
import { scholarshipRow, type ScholarshipFields, type ScholarshipRow } from './schema.js';

const columns = sql.fragment`id, name, fund_id, description, status, created_at, updated_at`;

export function findScholarship(
  db: CommonQueryMethods,
  institutionId: number,
  id: number,
  lock: FragmentSqlToken = sql.fragment``,
): Promise<ScholarshipRow | null> {
  return db.maybeOne(sql.type(scholarshipRow)`
    SELECT ${columns} FROM scholarships WHERE institution_id = ${institutionId} AND id = ${id} ${lock}`);
}

/** What the scholarship's live awards commit, as exact numeric text. */
export function committedByScholarship(
  db: CommonQueryMethods,
  institutionId: number,
  scholarshipId: number,
): Promise<string> {
  return db.oneFirst(sql.type(z.object({ committed: z.string() }))`
    SELECT coalesce(sum(amount), 0)::text AS committed FROM awards
    WHERE institution_id = ${institutionId} AND scholarship_id = ${scholarshipId}
      AND status = ANY(${sql.array([...liveAwardStatuses], 'text')})`);
}

export function insertScholarship(
  db: CommonQueryMethods,
  institutionId: number,
  scholarship: ScholarshipFields,
): Promise<ScholarshipRow> {
  return db.one(sql.type(scholarshipRow)`
    INSERT INTO scholarships (institution_id, name, fund_id, description, status)
    VALUES (${institutionId}, ${scholarship.name}, ${scholarship.fund_id}, ${scholarship.description},
            ${scholarship.status})
    RETURNING ${columns}`);
}

export function updateScholarship(
  db: CommonQueryMethods,
  institutionId: number,
  id: number,
  scholarship: ScholarshipFields,
): Promise<ScholarshipRow> {
  return db.one(sql.type(scholarshipRow)`
    UPDATE scholarships SET name = ${scholarship.name}, fund_id = ${scholarship.fund_id},
      description = ${scholarship.description}, status = ${scholarship.status}, updated_at = now()
    WHERE institution_id = ${institutionId} AND id = ${id}
    RETURNING ${columns}`);
}
