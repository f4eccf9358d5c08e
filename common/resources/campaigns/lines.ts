import { sql, type CommonQueryMethods } from 'slonik';
import type { LineCodes } from './recordCoding.js';

/**
 * What a gift's coded lines are, from the gift as stored: one line per designation, or the gift
 * itself when it has none. A line's codes are its designation's own pair when it carries a
 * code, else the gift's (codesOfPart); a line coded only to an appeal counts toward the appeal's campaign (an appeal keeps its campaign
 * while anything is coded to it). It counts its base amount net of refunds while the gift is
 * posted and converted. Lines without any code are not kept: nothing sums them.
 */
const linesOfGift = (institutionId: number, giftId: number) => sql.fragment`
  SELECT g.institution_id, g.id AS gift_id, l.line, g.donor_id, l.fund_id,
         coalesce(l.campaign_id, a.campaign_id) AS campaign_id, l.appeal_id, l.base_net,
         g.status = 'posted' AND l.base_net IS NOT NULL AS counted
  FROM gifts g
  CROSS JOIN LATERAL (
    SELECT t.ordinality::int AS line, (t.part ->> 'fund_id')::bigint AS fund_id,
           CASE WHEN t.part ?| ARRAY['campaign_id', 'appeal_id']
                THEN (t.part ->> 'campaign_id')::bigint ELSE g.campaign_id END AS campaign_id,
           CASE WHEN t.part ?| ARRAY['campaign_id', 'appeal_id']
                THEN (t.part ->> 'appeal_id')::bigint ELSE g.appeal_id END AS appeal_id,
           (t.part ->> 'base_amount')::numeric
             - coalesce((t.part ->> 'base_amount_refunded')::numeric, 0) AS base_net
    FROM jsonb_array_elements(g.designations) WITH ORDINALITY AS t(part, ordinality)
    UNION ALL
    SELECT 1, NULL, g.campaign_id, g.appeal_id, g.base_amount - g.base_amount_refunded
    WHERE g.designations = '[]'
  ) AS l
  LEFT JOIN appeals a ON a.institution_id = g.institution_id AND a.id = l.appeal_id
    AND l.campaign_id IS NULL
  WHERE g.institution_id = ${institutionId} AND g.id = ${giftId}
    AND (l.campaign_id IS NOT NULL OR l.appeal_id IS NOT NULL)`;

/**
 * Rewrites the gift's rows of `gift_lines` from the gift as it now is: the one place they are
 * written, called in the transaction of every write that changes a gift's lines, codes or money
 * (its create and update, a refund, a void; a delete takes them by the foreign key). A gift that
 * is coded nowhere, and was not before, has none to write.
 */
export async function writeGiftLines(
  db: CommonQueryMethods,
  institutionId: number,
  gift: { id: number } & LineCodes,
  before: LineCodes | null = gift,
): Promise<void> {
  const coded = (codes: LineCodes | null) =>
    codes !== null && (codes.campaign_ids.length > 0 || codes.appeal_ids.length > 0);
  if (!coded(gift) && !coded(before)) return;
  await db.query(sql.unsafe`
    DELETE FROM gift_lines WHERE institution_id = ${institutionId} AND gift_id = ${gift.id}`);
  await db.query(sql.unsafe`
    INSERT INTO gift_lines (institution_id, gift_id, line, donor_id, fund_id, campaign_id,
                            appeal_id, base_net, counted)
    ${linesOfGift(institutionId, gift.id)}`);
}
