import type { DuplicateCandidateResponse, DuplicatePairResponse } from './response.js';
import type { DuplicatePairRow } from './schema.js';

export const presentDuplicatePair = (row: DuplicatePairRow): DuplicatePairResponse => ({
  id: row.id,
  object: 'duplicate_pair',
  donor_id: row.donor_id,
  other_donor_id: row.other_donor_id,
  score: Number(row.score),
  matched_on: row.matched_on,
  dismissed_at: row.dismissed_at,
  dismiss_reason: row.dismiss_reason,
  created_at: row.created_at,
  updated_at: row.updated_at,
});

/** A pair as one of its donors sees it: the other donor is the candidate. */
export const presentCandidate = (
  row: DuplicatePairRow,
  viewerId: number,
): DuplicateCandidateResponse => ({
  object: 'duplicate_candidate',
  donor_id: row.donor_id === viewerId ? row.other_donor_id : row.donor_id,
  pair_id: row.id,
  score: Number(row.score),
  matched_on: row.matched_on,
});
