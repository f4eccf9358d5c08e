import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { MAX_CAMPAIGN_DEPTH } from './schema.js';

/**
 * The key of the transaction-scoped advisory lock that serialises changes to one institution's
 * campaign tree (any constant the service uses for nothing else; the institution is the second
 * key, folded into an int4: two institutions sharing a fold only wait for each other).
 */
const CAMPAIGN_TREE_LOCK = 7_341_301;

/**
 * Holds the institution's campaign tree until the transaction ends. A cycle check reads the
 * chain above the new parent as committed: two writes that each make one campaign the parent of
 * the other (A under B, B under A) would each see no cycle and both commit. Under this lock the
 * second one waits, and then reads the first's parent. Every write that changes where a campaign
 * sits takes it before any row lock, so it cannot wait for the lock while holding a row that the
 * holder needs.
 */
export async function lockCampaignTree(
  db: CommonQueryMethods,
  institutionId: number,
): Promise<void> {
  await db.query(sql.unsafe`
    SELECT pg_advisory_xact_lock(${CAMPAIGN_TREE_LOCK}, (${institutionId}::bigint % 2147483648)::int)`);
}

/**
 * The same lock, shared: held by a write of a gift's coded lines, which reads where each line
 * sits in the tree (lines.ts). Such writes do not wait for each other; a move waits for them,
 * and they for it.
 */
export async function lockCampaignTreeShared(
  db: CommonQueryMethods,
  institutionId: number,
): Promise<void> {
  await db.query(sql.unsafe`
    SELECT pg_advisory_xact_lock_shared(${CAMPAIGN_TREE_LOCK}, (${institutionId}::bigint % 2147483648)::int)`);
}

/**
 * The shared lock as a condition of one statement, taken only if no move holds or awaits the
 * tree: a statement cannot wait for a move, since it would then read the tree as it was before
 * the move (its snapshot is older than the wait). False sends the write to the full path,
 * which waits.
 */
export const tryLockCampaignTreeShared = (institutionId: number) => sql.fragment`
  pg_try_advisory_xact_lock_shared(${CAMPAIGN_TREE_LOCK}, (${institutionId}::bigint % 2147483648)::int)`;

/**
 * The campaign and the campaigns above it, nearest first, at most MAX_CAMPAIGN_DEPTH + 1 of them
 * (one more than a valid chain holds, so that a too-deep chain shows as too deep and the walk
 * ends even on a chain the tree should never have).
 */
export function ancestorIds(
  db: CommonQueryMethods,
  institutionId: number,
  campaignId: number,
): Promise<readonly number[]> {
  return db.anyFirst(sql.type(z.object({ id: z.coerce.number() }))`
    WITH RECURSIVE chain (id, parent_id, depth) AS (
      SELECT id, parent_id, 1 FROM campaigns
      WHERE institution_id = ${institutionId} AND id = ${campaignId}
      UNION ALL
      SELECT c.id, c.parent_id, chain.depth + 1
      FROM chain JOIN campaigns c ON c.institution_id = ${institutionId} AND c.id = chain.parent_id
      WHERE chain.depth <= ${MAX_CAMPAIGN_DEPTH}
    )
    SELECT id FROM chain ORDER BY depth`);
}

/**
 * How many levels the campaign's subtree has (1 for a campaign without children), counted to at
 * most MAX_CAMPAIGN_DEPTH + 1.
 */
export function subtreeHeight(
  db: CommonQueryMethods,
  institutionId: number,
  campaignId: number,
): Promise<number> {
  return db.oneFirst(sql.type(z.object({ height: z.coerce.number() }))`
    WITH RECURSIVE below (id, depth) AS (
      SELECT ${campaignId}::bigint, 1
      UNION ALL
      SELECT c.id, below.depth + 1
      FROM below JOIN campaigns c ON c.institution_id = ${institutionId} AND c.parent_id = below.id
      WHERE below.depth <= ${MAX_CAMPAIGN_DEPTH}
    )
    SELECT max(depth) AS height FROM below`);
}

/**
 * The campaign and every campaign below it, by id; [] when the institution has no such campaign.
 * What a campaign's progress sums over (fundraising.md §3: lines coded to the campaign or any
 * descendant). The tree is at most MAX_CAMPAIGN_DEPTH levels, so the walk is bounded.
 */
export function descendantCampaignIds(
  db: CommonQueryMethods,
  institutionId: number,
  campaignId: number,
): Promise<readonly number[]> {
  return db.anyFirst(sql.type(z.object({ id: z.coerce.number() }))`
    WITH RECURSIVE below (id, depth) AS (
      SELECT id, 1 FROM campaigns WHERE institution_id = ${institutionId} AND id = ${campaignId}
      UNION ALL
      SELECT c.id, below.depth + 1
      FROM below JOIN campaigns c ON c.institution_id = ${institutionId} AND c.parent_id = below.id
      WHERE below.depth <= ${MAX_CAMPAIGN_DEPTH}
    )
    SELECT id FROM below ORDER BY id`);
}

/** What still points at a campaign: its child campaigns and its appeals. */
export function campaignDependents(
  db: CommonQueryMethods,
  institutionId: number,
  campaignId: number,
): Promise<{ children: number; appeals: number }> {
  return db.one(sql.type(z.object({ children: z.number(), appeals: z.number() }))`
    SELECT
      (SELECT count(*)::int FROM campaigns
       WHERE institution_id = ${institutionId} AND parent_id = ${campaignId}) AS children,
      (SELECT count(*)::int FROM appeals
       WHERE institution_id = ${institutionId} AND campaign_id = ${campaignId}) AS appeals`);
}

export async function deleteCampaign(
  db: CommonQueryMethods,
  institutionId: number,
  id: number,
): Promise<void> {
  await db.query(
    sql.unsafe`DELETE FROM campaigns WHERE institution_id = ${institutionId} AND id = ${id}`,
  );
}
