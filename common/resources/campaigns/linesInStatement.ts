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

/**
 * Holds, before anything is inserted, the month rows of giving that the new gifts' insert will
 * change (`fields`: a query of each gift's fields as jsonb), as the trigger that changes them
 * holds them (1735020000000_giving-months.sql): the donors FOR SHARE, then the donor and household
 * rows in key order, then their fiscal years' rows (giving_years, kept by the months' own
 * triggers: a gift of another month of the same year takes the same year row). The trigger runs
 * at the statement's end, after the lines' totals; a coded
 * write on the full path changes its gift's month rows first and the totals after, so without this
 * the two could each hold what the other waits for. A month row not there yet is not held (a
 * donor's first gift of the month racing one of the full path can still deadlock, and is retried).
 * Always true.
 */
export function monthRowsHeld(institutionId: number, fields: FragmentSqlToken): FragmentSqlToken {
  return sql.fragment`(
    WITH wanted AS (
      SELECT DISTINCT (f.fields ->> 'donor_id')::bigint AS donor_id,
             date_trunc('month', (f.fields ->> 'gift_date')::date)::date AS month
      FROM (${fields}) AS f),
    donors_held AS MATERIALIZED (
      SELECT d.id, d.household_id FROM donors d
      WHERE d.institution_id = ${institutionId} AND d.id IN (SELECT donor_id FROM wanted)
      ORDER BY d.id FOR SHARE),
    units AS (
      SELECT 'donor' AS level, w.donor_id AS unit_id, w.month FROM wanted w
      UNION
      SELECT 'household', coalesce(d.household_id, w.donor_id), w.month
      FROM wanted w JOIN donors_held d ON d.id = w.donor_id)
    SELECT (SELECT count(*) FROM (
              SELECT 1 FROM giving_months m
              WHERE m.institution_id = ${institutionId}
                AND (m.level, m.unit_id, m.month) IN (SELECT level, unit_id, month FROM units)
              ORDER BY m.level, m.unit_id, m.month
              FOR NO KEY UPDATE OF m) AS held)
         + (SELECT count(*) FROM (
              SELECT 1 FROM giving_years y
              WHERE y.institution_id = ${institutionId}
                AND (y.level, y.unit_id, y.fiscal_year) IN (
                  SELECT u.level, u.unit_id, fiscal_year_of_month(u.month, i.giving_years_start_month)
                  FROM units u, institutions i WHERE i.id = ${institutionId})
              ORDER BY y.level, y.unit_id, y.fiscal_year
              FOR NO KEY UPDATE OF y) AS held_years)) >= 0`;
}
