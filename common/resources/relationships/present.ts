import { today } from '../../clock.js';
import type { RelationshipResponse } from './response.js';
import { relationshipTypeTable, type RelationshipRow } from './schema.js';

/** Current: not ended before today (YYYY-MM-DD strings compare like the dates they name). */
export const isCurrent = (endsOn: string | null, day: string = today()) =>
  endsOn === null || endsOn >= day;

/** A relationship as written: `donor_id` is `type` of `related_donor_id`. */
export const presentRelationship = (row: RelationshipRow): RelationshipResponse => ({
  id: row.id,
  object: 'relationship',
  donor_id: row.donor_id,
  related_donor_id: row.related_donor_id,
  type: row.type,
  starts_on: row.starts_on,
  ends_on: row.ends_on,
  is_current: isCurrent(row.ends_on),
  note: row.note,
  created_at: row.created_at,
  updated_at: row.updated_at,
});

/**
 * A relationship as one of its donors sees it: from the related side, the donors change places
 * and the type is its reciprocal (A parent_of B reads, from B, as B child_of A).
 */
export const presentRelationshipFrom = (
  row: RelationshipRow,
  viewerId: number,
): RelationshipResponse =>
  row.donor_id === viewerId
    ? presentRelationship(row)
    : {
        ...presentRelationship(row),
        donor_id: row.related_donor_id,
        related_donor_id: row.donor_id,
        type: relationshipTypeTable[row.type].reciprocal,
      };
