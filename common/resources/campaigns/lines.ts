import { sql, type CommonQueryMethods, type FragmentSqlToken } from 'slonik';
import { z } from 'zod';
import { centsToNumber, toCents } from '../../money.js';
import { lockCampaignTreeShared } from './queries.js';
import type { LineCodes } from './recordCoding.js';
import { MAX_CAMPAIGN_DEPTH } from './schema.js';

/**
 * What the coded lines of gifts are (`gifts`: rows of the gifts table, the gift as stored or as a
 * statement is inserting it): one line per designation, or the gift
 * itself when it has none. A line's codes are its designation's own pair when it carries a
 * code, else the gift's (codesOfPart); a line coded only to an appeal counts toward the appeal's campaign (an appeal keeps its campaign
 * while anything is coded to it). It counts its base amount net of refunds while the gift is
 * posted and converted. Lines without any code are not kept: nothing sums them.
 */
export const linesOf = (institutionId: number, gifts: FragmentSqlToken) => sql.fragment`
  SELECT g.institution_id, g.id AS gift_id, l.line, g.donor_id, l.fund_id,
         coalesce(l.campaign_id, a.campaign_id) AS campaign_id, l.appeal_id, l.base_net,
         g.status = 'posted' AND l.base_net IS NOT NULL AS counted
  FROM ${gifts} AS g
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
  LEFT JOIN appeals a ON a.institution_id = ${institutionId} AND a.id = l.appeal_id
    AND l.campaign_id IS NULL
  WHERE l.campaign_id IS NOT NULL OR l.appeal_id IS NOT NULL`;

const linesOfGift = (institutionId: number, giftId: number) =>
  linesOf(
    institutionId,
    sql.fragment`(SELECT * FROM gifts WHERE institution_id = ${institutionId} AND id = ${giftId})`,
  );

/** A row of gift_lines, as the totals need it. */
const lineRow = z.object({
  donor_id: z.coerce.number(),
  fund_id: z.coerce.number().nullable(),
  campaign_id: z.coerce.number().nullable(),
  appeal_id: z.coerce.number().nullable(),
  base_net: z.string().nullable(),
  counted: z.boolean(),
});
type Line = z.infer<typeof lineRow>;
const lineColumns = sql.fragment`donor_id, fund_id, campaign_id, appeal_id, base_net::text, counted`;

/**
 * Rewrites the gift's rows of `gift_lines` from the gift as it now is (none when `gone`: it is
 * about to be deleted), and applies the change to the campaign totals
 * (1734960000000_campaign-totals.sql, less campaign_tree_gifts: 1735120000000): the one place
 * they are written, called in the transaction
 * of every write that changes a gift's lines, codes or money (its create and update, a refund,
 * a void, a delete). A gift that is coded nowhere, and was not before, has none to write.
 */
export async function writeGiftLines(
  db: CommonQueryMethods,
  institutionId: number,
  gift: { id: number } & LineCodes,
  before: LineCodes | null = gift,
  gone = false,
): Promise<void> {
  const coded = (codes: LineCodes | null) =>
    codes !== null && (codes.campaign_ids.length > 0 || codes.appeal_ids.length > 0);
  if (!coded(gift) && !coded(before)) return;
  // Where a line sits in the tree is read under the tree's lock (shared: gifts do not wait for
  // each other), so a campaign's move, which rebuilds the tree's counts, comes before or after.
  await lockCampaignTreeShared(db, institutionId);
  // A gift coded nowhere before has no lines: its new ones only add, in one statement.
  if (!coded(before) && !gone) {
    await db.query(sql.unsafe`
      WITH ${newLinesSteps(
        institutionId,
        sql.fragment`SELECT id, to_jsonb(g) AS fields FROM gifts g
          WHERE g.institution_id = ${institutionId} AND g.id = ${gift.id}`,
      )}
      SELECT count(*) FROM lines_tree_donors`);
    return;
  }
  const old = await db.any(sql.type(lineRow)`
    DELETE FROM gift_lines WHERE institution_id = ${institutionId} AND gift_id = ${gift.id}
    RETURNING ${lineColumns}`);
  const now = gone
    ? []
    : await db.any(sql.type(lineRow)`
    INSERT INTO gift_lines (institution_id, gift_id, line, donor_id, fund_id, campaign_id,
                            appeal_id, base_net, counted)
    ${linesOfGift(institutionId, gift.id)}
    RETURNING ${lineColumns}`);
  await applyToTotals(db, institutionId, old, now);
}

/** What the lines counted (counted, of a campaign): each with +1 or -1. */
const countedLines = (lines: readonly Line[], sign: 1 | -1) =>
  lines
    .filter((line) => line.counted && line.campaign_id !== null)
    .map((line) => ({ ...line, campaign_id: line.campaign_id!, sign }));

/**
 * The change from `old` lines to `now` lines, applied to the totals as net changes per row, each
 * table's rows in key order: concurrent writes lock the rows they share in the same order.
 */
async function applyToTotals(
  db: CommonQueryMethods,
  institutionId: number,
  old: readonly Line[],
  now: readonly Line[],
): Promise<void> {
  const lines = [...countedLines(old, -1), ...countedLines(now, 1)];
  if (!lines.length) return;
  const totals = new Map<
    string,
    {
      campaign_id: number;
      appeal_id: number | null;
      fund_id: number | null;
      raised: bigint;
      lines: number;
    }
  >();
  for (const line of lines) {
    const key = `${line.campaign_id}:${line.appeal_id}:${line.fund_id}`;
    const row = totals.get(key) ?? {
      campaign_id: line.campaign_id,
      appeal_id: line.appeal_id,
      fund_id: line.fund_id,
      raised: 0n,
      lines: 0,
    };
    row.raised += BigInt(line.sign) * toCents(line.base_net ?? '0');
    row.lines += line.sign;
    totals.set(key, row);
  }
  const changed = [...totals.values()]
    .filter((row) => row.lines !== 0 || row.raised !== 0n)
    .map((row) => ({ ...row, raised: centsToNumber(row.raised).toFixed(2) }));
  if (changed.length) {
    const change = sql.fragment`SELECT * FROM json_to_recordset(${sql.json(changed)})
      AS c(campaign_id int8, appeal_id int8, fund_id int8, raised numeric, lines int)`;
    await db.query(sql.unsafe`
      INSERT INTO campaign_line_totals AS t
        (institution_id, campaign_id, appeal_id, fund_id, raised, lines)
      SELECT ${institutionId}, campaign_id, appeal_id, fund_id, raised, lines FROM (${change}) c
      ORDER BY campaign_id, appeal_id NULLS FIRST, fund_id NULLS FIRST
      ON CONFLICT (institution_id, campaign_id, appeal_id, fund_id)
      DO UPDATE SET raised = t.raised + excluded.raised, lines = t.lines + excluded.lines`);
    await db.query(sql.unsafe`
      DELETE FROM campaign_line_totals t USING (${change}) c
      WHERE t.institution_id = ${institutionId} AND t.lines = 0
        AND t.campaign_id = c.campaign_id AND t.appeal_id IS NOT DISTINCT FROM c.appeal_id
        AND t.fund_id IS NOT DISTINCT FROM c.fund_id`);
  }
  // The gift and its donors in every campaign above each line's, the campaign's own included.
  const campaigns = [...new Set(lines.map((line) => line.campaign_id))];
  const above = await ancestorsOf(db, institutionId, campaigns);
  const ancestorsOfLine = (line: { campaign_id: number }) =>
    above.get(line.campaign_id) ?? [line.campaign_id];
  // The gift is in a tree while it has a counted line there: its lines before and after say
  // whether it joined or left each one (lines of one gift change only under its write).
  const treesOf = (sign: 1 | -1) =>
    new Set(lines.filter((line) => line.sign === sign).flatMap(ancestorsOfLine));
  const [before, after] = [treesOf(-1), treesOf(1)];
  const giftsIn = new Map<number, number>();
  for (const ancestor of new Set([...before, ...after])) {
    const change = Number(after.has(ancestor)) - Number(before.has(ancestor));
    if (change !== 0) giftsIn.set(ancestor, change);
  }
  const donors = new Map<string, { ancestor_id: number; donor_id: number; lines: number }>();
  for (const line of lines)
    for (const ancestor of ancestorsOfLine(line)) {
      const key = `${ancestor}:${line.donor_id}`;
      const row = donors.get(key) ?? { ancestor_id: ancestor, donor_id: line.donor_id, lines: 0 };
      row.lines += line.sign;
      donors.set(key, row);
    }
  const donorRows = [...donors.values()]
    .filter((row) => row.lines !== 0)
    .map((row) => ({ ancestor_id: row.ancestor_id, member_id: row.donor_id, lines: row.lines }));
  const donorsIn = await applyToTreeDonors(db, institutionId, donorRows);
  await applyToCounts(db, institutionId, giftsIn, donorsIn);
}

const ancestorRow = z.object({ ancestor_id: z.coerce.number() });

/**
 * Net changes of lines per (ancestor, donor); a row left with none goes. Answers, per ancestor,
 * how many donors it gained (a row added) less those it lost (a row gone).
 */
async function applyToTreeDonors(
  db: CommonQueryMethods,
  institutionId: number,
  rows: readonly { ancestor_id: number; member_id: number; lines: number }[],
): Promise<Map<number, number>> {
  const gained = new Map<number, number>();
  if (!rows.length) return gained;
  const change = sql.fragment`SELECT * FROM json_to_recordset(${sql.json(rows)})
    AS c(ancestor_id int8, member_id int8, lines int)`;
  // xmax is 0 on a row this statement inserted, not on one it updated.
  const added = await db.anyFirst(sql.type(ancestorRow)`
    INSERT INTO campaign_tree_donors AS t (institution_id, ancestor_id, donor_id, lines)
    SELECT ${institutionId}, ancestor_id, member_id, lines FROM (${change}) c
    ORDER BY ancestor_id, member_id
    ON CONFLICT (institution_id, ancestor_id, donor_id) DO UPDATE SET lines = t.lines + excluded.lines
    RETURNING CASE WHEN t.xmax = 0 THEN t.ancestor_id END AS ancestor_id`);
  const gone = await db.anyFirst(sql.type(ancestorRow)`
    DELETE FROM campaign_tree_donors t USING (${change}) c
    WHERE t.institution_id = ${institutionId} AND t.lines = 0
      AND t.ancestor_id = c.ancestor_id AND t.donor_id = c.member_id
    RETURNING t.ancestor_id`);
  for (const id of added)
    if (id !== null) gained.set(Number(id), (gained.get(Number(id)) ?? 0) + 1);
  for (const id of gone) gained.set(Number(id), (gained.get(Number(id)) ?? 0) - 1);
  return gained;
}

/**
 * Each tree's gift and donor counts (campaign_tree_counts), by what its members gained: one row
 * per campaign, so a tree's counts are read, not counted. Rows in key order, as every total.
 */
async function applyToCounts(
  db: CommonQueryMethods,
  institutionId: number,
  gifts: Map<number, number>,
  donors: Map<number, number>,
): Promise<void> {
  const ancestors = [...new Set([...gifts.keys(), ...donors.keys()])].sort((a, b) => a - b);
  const rows = ancestors
    .map((id) => ({ ancestor_id: id, gifts: gifts.get(id) ?? 0, donors: donors.get(id) ?? 0 }))
    .filter((row) => row.gifts !== 0 || row.donors !== 0);
  if (!rows.length) return;
  await db.query(sql.unsafe`
    INSERT INTO campaign_tree_counts AS t (institution_id, ancestor_id, gift_count, donor_count)
    SELECT ${institutionId}, ancestor_id, gifts, donors
    FROM json_to_recordset(${sql.json(rows)}) AS c(ancestor_id int8, gifts int, donors int)
    ORDER BY ancestor_id
    ON CONFLICT (institution_id, ancestor_id) DO UPDATE
    SET gift_count = t.gift_count + excluded.gift_count,
        donor_count = t.donor_count + excluded.donor_count`);
}

/**
 * `closure (campaign_id, ancestor_id, depth)`: each campaign of the institution (those `which`
 * names) with itself (depth 0) and every campaign above it, the walk bounded as the tree is.
 */
export const closure = (institutionId: number, which: FragmentSqlToken) => sql.fragment`
  WITH RECURSIVE closure (campaign_id, ancestor_id, depth) AS (
    SELECT id, id, 0 FROM campaigns WHERE institution_id = ${institutionId} ${which}
    UNION ALL
    SELECT c.campaign_id, p.parent_id, c.depth + 1
    FROM closure c
    JOIN campaigns p ON p.institution_id = ${institutionId} AND p.id = c.ancestor_id
    WHERE p.parent_id IS NOT NULL AND c.depth < ${MAX_CAMPAIGN_DEPTH + 1})`;

/** Each campaign with every campaign above it, its own id first. */
async function ancestorsOf(
  db: CommonQueryMethods,
  institutionId: number,
  campaigns: readonly number[],
): Promise<Map<number, number[]>> {
  const rows = await db.any(sql.type(
    z.object({ campaign_id: z.coerce.number(), ancestor_id: z.coerce.number() }),
  )`
    ${closure(institutionId, sql.fragment`AND id = ANY(${sql.array([...campaigns], 'int8')})`)}
    SELECT campaign_id, ancestor_id FROM closure ORDER BY campaign_id, depth`);
  const above = new Map<number, number[]>();
  for (const row of rows)
    above.set(row.campaign_id, [...(above.get(row.campaign_id) ?? []), row.ancestor_id]);
  return above;
}

/**
 * After a campaign moved in the tree (under the tree's lock): the gifts and donors of every
 * campaign's tree again, from the lines. Costs a pass over the institution's counted lines,
 * once per move.
 */
export async function rebuildCampaignTreeCounts(
  db: CommonQueryMethods,
  institutionId: number,
): Promise<void> {
  await db.query(
    sql.unsafe`DELETE FROM campaign_tree_donors WHERE institution_id = ${institutionId}`,
  );
  await db.query(sql.unsafe`
    ${closure(institutionId, sql.fragment``)}
    INSERT INTO campaign_tree_donors (institution_id, ancestor_id, donor_id, lines)
    SELECT ${institutionId}, c.ancestor_id, l.donor_id, count(*)
    FROM gift_lines l JOIN closure c ON c.campaign_id = l.campaign_id
    WHERE l.institution_id = ${institutionId} AND l.counted
    GROUP BY c.ancestor_id, l.donor_id`);
  await db.query(
    sql.unsafe`DELETE FROM campaign_tree_counts WHERE institution_id = ${institutionId}`,
  );
  await db.query(sql.unsafe`
    ${closure(institutionId, sql.fragment``)},
    tree_gifts AS (
      SELECT c.ancestor_id, count(DISTINCT l.gift_id) AS gifts
      FROM gift_lines l JOIN closure c ON c.campaign_id = l.campaign_id
      WHERE l.institution_id = ${institutionId} AND l.counted
      GROUP BY c.ancestor_id)
    INSERT INTO campaign_tree_counts (institution_id, ancestor_id, gift_count, donor_count)
    SELECT ${institutionId}, c.id,
           coalesce((SELECT gifts FROM tree_gifts g WHERE g.ancestor_id = c.id), 0),
           (SELECT count(*) FROM campaign_tree_donors d
            WHERE d.institution_id = ${institutionId} AND d.ancestor_id = c.id)
    FROM campaigns c WHERE c.institution_id = ${institutionId}`);
}

/**
 * The writes of writeGiftLines for gifts that had no lines, whose lines therefore only add, as
 * steps of one WITH (`lines_… AS (…)`, comma-separated): `gifts` is a query of the gifts
 * `(id, fields)`, `fields` the jsonb of each gift's stored fields (a new gift's may leave out
 * `status` and `base_amount_refunded`: posted, nothing refunded). The same sums as applyToTotals,
 * summed over the gifts, each table's rows in key order and the tables in applyToTotals' order
 * (each step reads the one before it to the end), so that writes of different gifts' lines lock
 * the rows they share in one order. Used by the worker's grouped creates (steps of their one
 * statement, which holds the donors' month rows first: monthRowsHeld) and by
 * writeGiftLines for a gift that was coded nowhere; test/campaignLines.property.test.ts holds
 * both paths to a recomputation.
 */
export function newLinesSteps(institutionId: number, gifts: FragmentSqlToken): FragmentSqlToken {
  const after = (step: string) =>
    sql.fragment`CROSS JOIN (SELECT count(*) FROM ${sql.identifier([step])}) AS ${sql.identifier([`${step}_done`])}`;
  // The columns of the gifts that linesOf reads, each gift's read from its fields once.
  return sql.fragment`
    lines_gifts AS MATERIALIZED (
      SELECT ${institutionId}::bigint AS institution_id, r.id, g.donor_id, g.designations,
             g.campaign_id, g.appeal_id, g.base_amount,
             coalesce(g.status, 'posted') AS status,
             coalesce(g.base_amount_refunded, 0) AS base_amount_refunded
      FROM (${gifts}) AS r
      CROSS JOIN LATERAL jsonb_to_record(r.fields)
        AS g(donor_id bigint, designations jsonb, campaign_id bigint, appeal_id bigint,
             base_amount numeric, status text, base_amount_refunded numeric)),
    lines_written AS (
      INSERT INTO gift_lines (institution_id, gift_id, line, donor_id, fund_id, campaign_id,
                              appeal_id, base_net, counted)
      ${linesOf(institutionId, sql.fragment`lines_gifts`)}
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
    lines_tree_donors AS (
      INSERT INTO campaign_tree_donors AS t (institution_id, ancestor_id, donor_id, lines)
      SELECT ${institutionId}, ancestor_id, donor_id, count(*) FROM lines_above
      GROUP BY ancestor_id, donor_id
      ORDER BY ancestor_id, donor_id
      ON CONFLICT (institution_id, ancestor_id, donor_id) DO UPDATE SET lines = t.lines + excluded.lines
      RETURNING t.ancestor_id, t.xmax = 0 AS added),
    lines_tree_counts AS (
      INSERT INTO campaign_tree_counts AS t (institution_id, ancestor_id, gift_count, donor_count)
      SELECT ${institutionId}, ancestor_id, sum(gifts), sum(donors)
      FROM (SELECT ancestor_id, count(DISTINCT gift_id) AS gifts, 0 AS donors FROM lines_above
            GROUP BY ancestor_id
            UNION ALL
            SELECT ancestor_id, 0, 1 FROM lines_tree_donors WHERE added) AS c
      GROUP BY ancestor_id
      ORDER BY ancestor_id
      ON CONFLICT (institution_id, ancestor_id) DO UPDATE
      SET gift_count = t.gift_count + excluded.gift_count,
          donor_count = t.donor_count + excluded.donor_count)`;
}

/**
 * A merge (constituents.md §5): the lines of `fromId`'s gifts become `toId`'s, and each tree that
 * counted both donors counts one fewer. The gifts' totals do not change (a line's gift, fund,
 * codes and amount stay), so only the donor rows and donor counts do. The caller holds both
 * donors FOR UPDATE, so no other write changes their rows meanwhile; the counts are changed in
 * ancestor order, as every writer of them changes them.
 */
export async function moveDonorLines(
  db: CommonQueryMethods,
  institutionId: number,
  fromId: number,
  toId: number,
): Promise<void> {
  await db.query(sql.unsafe`
    UPDATE gift_lines SET donor_id = ${toId}
    WHERE institution_id = ${institutionId} AND donor_id = ${fromId}`);
  await lockCampaignTreeShared(db, institutionId);
  const moved = await db.any(sql.type(z.object({ ancestor_id: z.number(), lines: z.number() }))`
    DELETE FROM campaign_tree_donors
    WHERE institution_id = ${institutionId} AND donor_id = ${fromId}
    RETURNING ancestor_id, lines`);
  if (!moved.length) return;
  const ancestors = sql.array(
    moved.map((row) => row.ancestor_id),
    'int8',
  );
  const shared = await db.anyFirst(sql.type(z.object({ ancestor_id: z.number() }))`
    SELECT ancestor_id FROM campaign_tree_donors
    WHERE institution_id = ${institutionId} AND donor_id = ${toId} AND ancestor_id = ANY(${ancestors})`);
  await db.query(sql.unsafe`
    INSERT INTO campaign_tree_donors AS t (institution_id, ancestor_id, donor_id, lines)
    SELECT ${institutionId}, m.ancestor_id, ${toId}, m.lines
    FROM json_to_recordset(${sql.json([...moved])}) AS m(ancestor_id int8, lines int)
    ORDER BY m.ancestor_id
    ON CONFLICT (institution_id, ancestor_id, donor_id) DO UPDATE SET lines = t.lines + excluded.lines`);
  if (!shared.length) return;
  await db.query(sql.unsafe`
    UPDATE campaign_tree_counts SET donor_count = donor_count - 1
    WHERE institution_id = ${institutionId}
      AND ancestor_id IN (SELECT unnest(${sql.array(
        [...shared].sort((a, b) => a - b),
        'int8',
      )}))`);
}
