import { sql, type FragmentSqlToken } from 'slonik';
import { closure, linesOf } from './lines.js';
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
 * The writes of writeGiftLines for gifts a statement is inserting, as further steps of its WITH
 * (each `, lines_… AS (…)`): `created` is a query of the new gifts `(id, fields)`, `fields` the
 * jsonb of the stored fields, each gift a new one (posted, nothing refunded). A new gift's lines
 * only add: the same sums as applyToTotals, summed over the statement's gifts, each table's rows
 * in key order and the tables in writeGiftLines' order (each step reads the one before it to the
 * end), so that it and a write of another gift's lines lock the rows they share in one order.
 * test/campaignLines.property.test.ts holds both to a recomputation.
 */
export function codedLinesSteps(
  institutionId: number,
  created: FragmentSqlToken,
): FragmentSqlToken {
  const gifts = sql.fragment`(
    SELECT (jsonb_populate_record(NULL::gifts, r.fields || jsonb_build_object(
      'id', r.id, 'institution_id', ${institutionId}::bigint, 'status', 'posted',
      'amount_refunded', 0, 'base_amount_refunded', 0))).*
    FROM (${created}) AS r)`;
  const after = (step: string) =>
    sql.fragment`CROSS JOIN (SELECT count(*) FROM ${sql.identifier([step])}) AS ${sql.identifier([`${step}_done`])}`;
  return sql.fragment`,
    lines_written AS (
      INSERT INTO gift_lines (institution_id, gift_id, line, donor_id, fund_id, campaign_id,
                              appeal_id, base_net, counted)
      ${linesOf(institutionId, gifts)}
      RETURNING gift_id, donor_id, fund_id, campaign_id, appeal_id, base_net, counted),
    lines_counted AS (
      SELECT * FROM lines_written WHERE counted AND campaign_id IS NOT NULL),
    lines_totals AS (
      INSERT INTO campaign_line_totals AS t
        (institution_id, campaign_id, appeal_id, fund_id, raised, lines)
      SELECT ${institutionId}, campaign_id, appeal_id, fund_id, sum(base_net), count(*)
      FROM lines_counted
      GROUP BY campaign_id, appeal_id, fund_id
      ORDER BY campaign_id, appeal_id NULLS FIRST, fund_id NULLS FIRST
      ON CONFLICT (institution_id, campaign_id, appeal_id, fund_id)
      DO UPDATE SET raised = t.raised + excluded.raised, lines = t.lines + excluded.lines
      RETURNING 1),
    lines_above AS (
      ${closure(institutionId, sql.fragment`AND id IN (SELECT campaign_id FROM lines_counted)`)}
      SELECT l.gift_id, l.donor_id, c.ancestor_id
      FROM lines_counted l JOIN closure c ON c.campaign_id = l.campaign_id
      ${after('lines_totals')}),
    lines_tree_gifts AS (
      INSERT INTO campaign_tree_gifts (institution_id, ancestor_id, gift_id, lines)
      SELECT ${institutionId}, ancestor_id, gift_id, count(*) FROM lines_above
      GROUP BY ancestor_id, gift_id
      ORDER BY ancestor_id, gift_id
      RETURNING ancestor_id),
    lines_tree_donors AS (
      INSERT INTO campaign_tree_donors AS t (institution_id, ancestor_id, donor_id, lines)
      SELECT ${institutionId}, ancestor_id, donor_id, count(*) FROM lines_above
      ${after('lines_tree_gifts')}
      GROUP BY ancestor_id, donor_id
      ORDER BY ancestor_id, donor_id
      ON CONFLICT (institution_id, ancestor_id, donor_id) DO UPDATE SET lines = t.lines + excluded.lines
      RETURNING t.ancestor_id, t.xmax = 0 AS added),
    lines_tree_counts AS (
      INSERT INTO campaign_tree_counts AS t (institution_id, ancestor_id, gift_count, donor_count)
      SELECT ${institutionId}, ancestor_id, sum(gifts), sum(donors)
      FROM (SELECT ancestor_id, 1 AS gifts, 0 AS donors FROM lines_tree_gifts
            UNION ALL
            SELECT ancestor_id, 0, 1 FROM lines_tree_donors WHERE added) AS c
      GROUP BY ancestor_id
      ORDER BY ancestor_id
      ON CONFLICT (institution_id, ancestor_id) DO UPDATE
      SET gift_count = t.gift_count + excluded.gift_count,
          donor_count = t.donor_count + excluded.donor_count)`;
}
