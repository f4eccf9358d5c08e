import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { RecordReadDescriptor } from '../descriptor.js';
import { moneyAmount, reference } from '../responseFields.js';
import { descendantCampaignIds } from './queries.js';

const byAppealRow = z.object({
  appeal_id: reference('appeal').nullable().describe('Null: the lines coded to no appeal.'),
  raised: moneyAmount,
});
const byFundRow = z.object({
  fund_id: reference('fund').nullable().describe('Null: the lines of undesignated gifts.'),
  raised: moneyAmount,
});

export const campaignProgressResponse = z.object({
  object: z.literal('campaign_progress'),
  campaign_id: reference('campaign'),
  goal: moneyAmount
    .nullable()
    .describe('The campaign’s goal, in the base currency; null for none.'),
  raised: moneyAmount.describe(
    'The base amounts of the gift lines coded to the campaign or a campaign below it, net of refunds; voided and unconverted gifts left out, soft credits never counted.',
  ),
  pledged_outstanding: moneyAmount.describe(
    'What open pledges coded to the campaign or below still owe (`base_balance`), by line: a designated pledge counts each designation’s share of its `base_balance`, in proportion to the designation’s amount, where that designation is coded to the tree.',
  ),
  gift_count: z.number().int().min(0).describe('The gifts with a counted line.'),
  donor_count: z.number().int().min(0).describe('The donors (hard credit) of those gifts.'),
  percent_of_goal: z
    .number()
    .nullable()
    .describe('`raised ÷ goal × 100`, rounded half up to 2 decimals; null without a goal.'),
  // One row per appeal or fund of the institution at most: bounded by the data, not by a limit.
  by_appeal: z
    .array(byAppealRow)
    .max(Number.MAX_SAFE_INTEGER)
    .describe(
      '`raised` by the lines’ appeal, by `appeal_id` with the null row last; sums exactly to `raised`.',
    ),
  by_fund: z
    .array(byFundRow)
    .max(Number.MAX_SAFE_INTEGER)
    .describe(
      '`raised` by the lines’ fund, by `fund_id` with the null row last; sums exactly to `raised`.',
    ),
});

export const appealResultsResponse = z.object({
  object: z.literal('appeal_results'),
  appeal_id: reference('appeal'),
  raised: moneyAmount.describe(
    'The base amounts of the gift lines coded to the appeal, net of refunds; voided and unconverted gifts left out, soft credits never counted.',
  ),
  gift_count: z.number().int().min(0).describe('The gifts with a counted line.'),
  donor_count: z.number().int().min(0).describe('The donors (hard credit) of those gifts.'),
  cost: moneyAmount.nullable().describe('The appeal’s cost; null when not recorded.'),
  cost_per_unit_raised: z
    .number()
    .nullable()
    .describe(
      '`cost ÷ raised`, rounded half up to 4 decimals (what one unit of the base currency raised cost); null when nothing was raised or the cost is not recorded.',
    ),
});

const money = z.string();
const progressRow = z.object({
  goal: money.nullable(),
  raised: money,
  pledged_outstanding: money,
  gift_count: z.number(),
  donor_count: z.number(),
  percent_of_goal: money.nullable(),
  by_appeal: z.array(z.object({ appeal_id: z.number().nullable(), raised: money })),
  by_fund: z.array(z.object({ fund_id: z.number().nullable(), raised: money })),
});

/** The lines of one split of a pledge, coded as a gift's are (codesOfPart, lines.ts). */
const pledgeOutstanding = (institutionId: number, tree: readonly number[]) => sql.fragment`
  SELECT coalesce(round(sum(l.share), 2), 0)
  FROM pledges p
  CROSS JOIN LATERAL (
    SELECT CASE WHEN t.part ?| ARRAY['campaign_id', 'appeal_id']
                THEN (t.part ->> 'campaign_id')::bigint ELSE p.campaign_id END AS campaign_id,
           CASE WHEN t.part ?| ARRAY['campaign_id', 'appeal_id']
                THEN (t.part ->> 'appeal_id')::bigint ELSE p.appeal_id END AS appeal_id,
           p.base_balance * (t.part ->> 'amount')::numeric / p.amount AS share
    FROM jsonb_array_elements(p.designations) AS t(part)
    UNION ALL
    SELECT p.campaign_id, p.appeal_id, p.base_balance WHERE p.designations = '[]'
  ) AS l
  LEFT JOIN appeals a ON a.institution_id = p.institution_id AND a.id = l.appeal_id
    AND l.campaign_id IS NULL
  WHERE p.institution_id = ${institutionId} AND p.status = 'open'
    AND p.campaign_ids <> '{}' AND p.campaign_ids && ${sql.array([...tree], 'int8')}
    AND coalesce(l.campaign_id, a.campaign_id) = ANY(${sql.array([...tree], 'int8')})`;

/**
 * GET /campaigns/{id}/progress (fundraising.md §3): the totals writeGiftLines keeps current in
 * every write's transaction (1734960000000_campaign-totals.sql), no scan of the lines: `raised`,
 * by appeal and by fund from the rows of the tree's campaigns (each list sums exactly to
 * `raised`: the same rows, in numeric), the gifts and donors from the campaign's one row of
 * counts (as the top of its tree).
 */
export async function campaignProgress(db: CommonQueryMethods, institutionId: number, id: number) {
  const tree = await descendantCampaignIds(db, institutionId, id);
  if (!tree.length) return null;
  const ids = sql.array([...tree], 'int8');
  const row = await db.one(sql.type(progressRow)`
    WITH totals AS MATERIALIZED (
      SELECT appeal_id, fund_id, raised FROM campaign_line_totals
      WHERE institution_id = ${institutionId} AND campaign_id = ANY(${ids})
    ),
    goal AS (SELECT goal FROM campaigns WHERE institution_id = ${institutionId} AND id = ${id}),
    total AS (SELECT coalesce(sum(raised), 0) AS raised FROM totals)
    SELECT (SELECT goal::text FROM goal) AS goal,
           total.raised::text AS raised,
           (${pledgeOutstanding(institutionId, tree)})::text AS pledged_outstanding,
           coalesce((SELECT gift_count FROM campaign_tree_counts
                     WHERE institution_id = ${institutionId} AND ancestor_id = ${id}), 0)
             AS gift_count,
           coalesce((SELECT donor_count FROM campaign_tree_counts
                     WHERE institution_id = ${institutionId} AND ancestor_id = ${id}), 0)
             AS donor_count,
           (SELECT round(total.raised / goal * 100, 2)::text FROM goal) AS percent_of_goal,
           (SELECT coalesce(jsonb_agg(jsonb_build_object('appeal_id', appeal_id, 'raised', raised::text)
                                      ORDER BY appeal_id NULLS LAST), '[]')
            FROM (SELECT appeal_id, sum(raised) AS raised FROM totals GROUP BY appeal_id) AS s)
             AS by_appeal,
           (SELECT coalesce(jsonb_agg(jsonb_build_object('fund_id', fund_id, 'raised', raised::text)
                                      ORDER BY fund_id NULLS LAST), '[]')
            FROM (SELECT fund_id, sum(raised) AS raised FROM totals GROUP BY fund_id) AS s)
             AS by_fund
    FROM total`);
  return {
    object: 'campaign_progress',
    campaign_id: id,
    goal: row.goal === null ? null : Number(row.goal),
    raised: Number(row.raised),
    pledged_outstanding: Number(row.pledged_outstanding),
    gift_count: row.gift_count,
    donor_count: row.donor_count,
    percent_of_goal: row.percent_of_goal === null ? null : Number(row.percent_of_goal),
    by_appeal: row.by_appeal.map((r) => ({ appeal_id: r.appeal_id, raised: Number(r.raised) })),
    by_fund: row.by_fund.map((r) => ({ fund_id: r.fund_id, raised: Number(r.raised) })),
  } satisfies z.infer<typeof campaignProgressResponse>;
}

const resultsRow = z.object({
  cost: money.nullable(),
  raised: money,
  gift_count: z.number(),
  donor_count: z.number(),
  cost_per_unit_raised: money.nullable(),
});

/** GET /appeals/{id}/results (fundraising.md §3): the appeal's counted gift lines, summed. */
export async function appealResults(db: CommonQueryMethods, institutionId: number, id: number) {
  const row = await db.maybeOne(sql.type(resultsRow)`
    WITH lines AS MATERIALIZED (
      SELECT gift_id, donor_id, base_net FROM gift_lines
      WHERE institution_id = ${institutionId} AND counted AND appeal_id = ${id}
    ),
    total AS (SELECT coalesce(sum(base_net), 0) AS raised FROM lines)
    SELECT a.cost::text AS cost, total.raised::text AS raised,
           (SELECT count(DISTINCT gift_id)::int FROM lines) AS gift_count,
           (SELECT count(DISTINCT donor_id)::int FROM lines) AS donor_count,
           CASE WHEN total.raised > 0 THEN round(a.cost / total.raised, 4)::text END
             AS cost_per_unit_raised
    FROM appeals a, total
    WHERE a.institution_id = ${institutionId} AND a.id = ${id}`);
  if (!row) return null;
  return {
    object: 'appeal_results',
    appeal_id: id,
    raised: Number(row.raised),
    gift_count: row.gift_count,
    donor_count: row.donor_count,
    cost: row.cost === null ? null : Number(row.cost),
    cost_per_unit_raised:
      row.cost_per_unit_raised === null ? null : Number(row.cost_per_unit_raised),
  } satisfies z.infer<typeof appealResultsResponse>;
}

export const campaignProgressView: RecordReadDescriptor = {
  name: 'progress',
  query: {},
  response: campaignProgressResponse,
  read: (db, institutionId, id) => campaignProgress(db, institutionId, id),
  text: {
    component: 'CampaignProgress',
    operationId: 'retrieveCampaignProgress',
    summary: 'A campaign’s progress',
    description: [
      'How the campaign is doing against its goal (fundraising.md §3), in the base currency. Everything it counts is a **gift line**: a designation of a gift, or the gift itself when it has none, coded to the campaign or to any campaign below it (a line’s code is its designation’s own, else the gift’s; a line coded only to an appeal counts toward the appeal’s campaign).',
      '`raised` sums the lines’ base amounts net of refunds. Voided gifts, and gifts not yet converted to the base currency (`base_amount` null), count nothing; pledge payments count (they are gifts); soft credits never count. A pledge itself is not raised: an open pledge counts in `pledged_outstanding` (see its description). `gift_count` and `donor_count` count the distinct gifts and donors with a counted line.',
      '`by_appeal` and `by_fund` split `raised` by the lines’ appeal and fund: one row per appeal (fund), ordered by id, with one row of null id last for the lines without an appeal (undesignated lines); each list sums exactly to `raised`.',
    ].join('\n\n'),
  },
};

export const appealResultsView: RecordReadDescriptor = {
  name: 'results',
  query: {},
  response: appealResultsResponse,
  read: (db, institutionId, id) => appealResults(db, institutionId, id),
  text: {
    component: 'AppealResults',
    operationId: 'retrieveAppealResults',
    summary: 'An appeal’s results',
    description:
      'What the appeal raised and what it cost (fundraising.md §3), in the base currency. `raised` sums the base amounts, net of refunds, of the gift lines coded to the appeal (a designation’s own appeal, else the gift’s): voided and unconverted gifts count nothing, pledge payments count, soft credits never do. `gift_count` and `donor_count` count the distinct gifts and donors with such a line. `cost_per_unit_raised` is `cost ÷ raised` to 4 decimals, null when nothing was raised or the cost is not recorded.',
  },
};
