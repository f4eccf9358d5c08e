import { sql, type FragmentSqlToken } from 'slonik';
import { tryLockCampaignTreeShared } from './queries.js';
import { appealReference } from '../appeals/schema.js';
import { campaignReference, MAX_CAMPAIGN_DEPTH } from './schema.js';

/**
 * What a new gift coded at the gift (not per designation) was judged with, for the guard of its
 * one statement: the campaign its lines count toward (its own, else its appeal's), its appeal,
 * and whether the campaign is the gift's own (else it was taken from the appeal, as hinted).
 */
export interface CodedLinesHints {
  campaign_id: number | null;
  appeal_id: number | null;
  own: boolean;
}

const unusable = (statuses: readonly string[] | undefined) =>
  sql.array([...(statuses ?? [])], 'text');

/**
 * Whether the codes of a new gift hold as `hints` (a jsonb expression of CodedLinesHints) says,
 * as codingOf would judge them, holding what the full path holds until the commit:
 *
 * - the tree's shared lock, if no move holds it (tryLockCampaignTreeShared);
 * - the appeal usable, of the gift's campaign or of none (`own`), else of exactly the hinted
 *   campaign, held FOR KEY SHARE;
 * - the campaign usable, and each campaign from it up to the top of its tree with the parent the
 *   statement's reading of the tree found, held FOR SHARE: a move of any of them (an update of
 *   its parent) waits for this gift, or this lock for the move, and then reads the row as the
 *   move left it, the parent differs, and the gift is judged in full.
 */
export function codedLinesHold(institutionId: number, hints: FragmentSqlToken): FragmentSqlToken {
  const campaign = sql.fragment`(${hints} ->> 'campaign_id')::bigint`;
  const appeal = sql.fragment`(${hints} ->> 'appeal_id')::bigint`;
  return sql.fragment`${tryLockCampaignTreeShared(institutionId)}
    AND (${appeal} IS NULL OR EXISTS (
      SELECT 1 FROM appeals a
      WHERE a.institution_id = ${institutionId} AND a.id = ${appeal}
        AND a.status <> ALL(${unusable(appealReference.unusable?.statuses)})
        AND CASE WHEN (${hints} ->> 'own')::boolean
                 THEN a.campaign_id IS NULL OR a.campaign_id = ${campaign}
                 ELSE a.campaign_id IS NOT DISTINCT FROM ${campaign} END
      FOR KEY SHARE))
    AND (${campaign} IS NULL OR (
      WITH RECURSIVE chain (id, parent_id, depth) AS (
        SELECT id, parent_id, 1 FROM campaigns
        WHERE institution_id = ${institutionId} AND id = ${campaign}
        UNION ALL
        SELECT c.id, c.parent_id, chain.depth + 1
        FROM chain JOIN campaigns c ON c.institution_id = ${institutionId} AND c.id = chain.parent_id
        WHERE chain.depth <= ${MAX_CAMPAIGN_DEPTH}
      ),
      held AS (
        SELECT c.id, c.parent_id, c.status FROM campaigns c
        WHERE c.institution_id = ${institutionId} AND c.id IN (SELECT id FROM chain)
        FOR SHARE OF c)
      SELECT count(*) > 0 AND count(*) = (SELECT count(*) FROM chain)
             AND bool_and(held.id <> ${campaign}
                          OR held.status <> ALL(${unusable(campaignReference.unusable?.statuses)}))
      FROM chain JOIN held ON held.id = chain.id
        AND held.parent_id IS NOT DISTINCT FROM chain.parent_id))`;
}
