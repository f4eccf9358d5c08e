import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { CommandContext } from '../../commands/command.js';
import { donorRoles } from '../donors/schema.js';
import { partnerTypes, type RelationshipType } from './schema.js';

const donorRole = z.object({ id: z.number(), role: z.enum(donorRoles), status: z.string() });

/**
 * The roles of these donors of the institution, by id (a missing or foreign id is absent). A real
 * write locks them, lower id first, for the rest of its transaction: two writes on relationships
 * of the same donor then judge the current relationships one after the other, so two of them
 * cannot both add a current spouse or the same current pair (a unique index cannot say
 * "current by today's clock"). FOR NO KEY UPDATE leaves gifts naming the donor free, and the one
 * order (lower id first, as every write that names donors: holdDonors) makes no deadlock; a
 * merge holding a donor FOR UPDATE goes first, and the donor is then read merged.
 */
export async function lockDonorRoles(
  ctx: CommandContext,
  ids: readonly number[],
): Promise<Map<number, { role: string; status: string }>> {
  if (!ids.length) return new Map();
  const rows = await ctx.db.any(sql.type(donorRole)`
    SELECT id, role, status FROM donors
    WHERE institution_id = ${ctx.institution.id} AND id = ANY(${sql.array([...ids], 'int8')})
    ORDER BY id ${ctx.dryRun ? sql.fragment`` : sql.fragment`FOR NO KEY UPDATE`}`);
  return new Map(rows.map((row) => [row.id, { role: row.role, status: row.status }]));
}

/** What another relationship of the institution must not share with the one being written. */
interface Candidate {
  /** The relationship itself, on an update. */
  exceptId: number | null;
  donorId: number;
  relatedDonorId: number;
  type: RelationshipType;
  today: string;
}

const current = (today: string) => sql.fragment`(ends_on IS NULL OR ends_on >= ${today}::date)`;

/** Another current relationship of the same type between the same two donors, either order. */
export function samePairIsCurrent(
  db: CommonQueryMethods,
  institutionId: number,
  candidate: Candidate,
): Promise<boolean> {
  const { donorId, relatedDonorId } = candidate;
  return db.exists(sql.unsafe`
    SELECT 1 FROM relationships
    WHERE institution_id = ${institutionId} AND type = ${candidate.type}
      AND ((donor_id = ${donorId} AND related_donor_id = ${relatedDonorId})
        OR (donor_id = ${relatedDonorId} AND related_donor_id = ${donorId}))
      AND id IS DISTINCT FROM ${candidate.exceptId} AND ${current(candidate.today)}`);
}

/** Which of these donors already has another current spouse_of or partner_of relationship. */
export async function donorsWithCurrentPartner(
  db: CommonQueryMethods,
  institutionId: number,
  candidate: Candidate,
): Promise<number[]> {
  const ids = sql.array([candidate.donorId, candidate.relatedDonorId], 'int8');
  const found = await db.anyFirst(sql.unsafe`
    SELECT side FROM relationships,
      LATERAL (VALUES (donor_id), (related_donor_id)) AS sides (side)
    WHERE institution_id = ${institutionId}
      AND type = ANY(${sql.array([...partnerTypes], 'text')})
      AND (donor_id = ANY(${ids}) OR related_donor_id = ANY(${ids}))
      AND id IS DISTINCT FROM ${candidate.exceptId} AND ${current(candidate.today)}
      AND side = ANY(${ids})
    ORDER BY side`);
  return [...new Set(found.map(Number))];
}

export async function deleteRelationship(
  db: CommonQueryMethods,
  institutionId: number,
  id: number,
): Promise<void> {
  await db.query(
    sql.unsafe`DELETE FROM relationships WHERE institution_id = ${institutionId} AND id = ${id}`,
  );
}
