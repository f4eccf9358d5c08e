import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { liveAwardStatuses } from '../awards/schema.js';

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
