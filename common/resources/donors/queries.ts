import { sql, type CommonQueryMethods, type FragmentSqlToken } from 'slonik';
import type { CommandContext } from '../../commands/command.js';
import { z } from 'zod';
import { recurringGiftTable, type RecurringGiftRow } from '../recurringGifts/schema.js';
import { columnsOf } from '../table.js';
import { givingRow, type GivingRow } from './schema.js';

/**
 * What one soft credit (`credit`, an element of `g.soft_credits`) counts, in the base currency
 * (fundraising.md §2): its base amount in proportion to its gift's net base amount, base amount
 * × net / gift's base amount, rounded down to the cent. A
 * gift refunded in full counts 0, a credit of the whole gift counts exactly the gift's net, and
 * no credit counts more than its exact share: rounding never makes a cent. (A voided gift's
 * credits do not count at all: the callers take posted gifts only.) Exact in numeric: div()
 * truncates the quotient in whole cents, which × 0.01 gives back with two decimals. A gift
 * worth less than half a cent of the base currency (0.50 JPY) has a base amount of 0: its
 * credits count 0, and are still counted in soft_credit_count as gift_count counts the gift.
 */
const countedSoftCredit = sql.fragment`
  CASE WHEN g.base_amount = 0 THEN 0
       ELSE div((credit ->> 'base_amount')::numeric * (g.base_amount - g.base_amount_refunded) * 100,
                g.base_amount) * 0.01 END`;

/**
 * The donor's giving (giving.md §2–3), in the base currency (fundraising.md §2): hard credit from its gifts that are not voided, net of
 * refunds; soft credit from the soft credits other donors' gifts (not voided) give it, each in
 * proportion to its gift's net amount (countedSoftCredit); what its open pledges still owe
 * (giving.md §5).
 *
 * A Household's figures (constituents.md §1) are those of the household and its current members
 * (`memberIds`, as findMemberIds read them, so that `giving` and `member_ids` agree) taken as
 * one donor: their gifts and pledges count as its own, and a soft credit to the household counts
 * only from a gift of someone else, so that each gift counts once. A gift has one donor, so no
 * gift is counted twice in the hard figures.
 */
export async function findGiving(
  db: CommonQueryMethods,
  institutionId: number,
  donorId: number,
  memberIds: readonly number[] = [],
): Promise<GivingRow> {
  const members = sql.array([...memberIds], 'int8');
  const { member_ids: _members, ...giving } = await db.one(
    sql.type(givingWithMembersRow)`${givingSelect(institutionId, donorId, members)}`,
  );
  return giving;
}

/**
 * How many of the givers' posted gifts count nothing (refunded in full, or with a base amount of
 * 0): gift_count counts them, giving_months does not. In the terms of gifts_donor_uncounted_idx.
 */
const uncountedGifts = (institutionId: number) => sql.fragment`
  SELECT count(*) FROM gifts
  WHERE institution_id = ${institutionId} AND donor_id = ANY(${giverIds})
    AND status = 'posted' AND base_amount IS NOT NULL AND base_amount <= base_amount_refunded`;

/** The first (ASC) or last (DESC) date of `giver.id`'s posted gifts: one probe of gifts_donor_gift_date_idx. */
const postedGiftDate = (institutionId: number, order: FragmentSqlToken) => sql.fragment`
  SELECT gift_date FROM gifts
  WHERE institution_id = ${institutionId} AND donor_id = giver.id
    AND status = 'posted' AND base_amount IS NOT NULL
  ORDER BY gift_date ${order}
  LIMIT 1`;

/**
 * The givers (the donor and its members), as givingSelect's CTE holds them; cast, so that
 * `= ANY(…)` takes the array, not the subquery's rows.
 */
const giverIds = sql.fragment`(SELECT ids FROM givers)::bigint[]`;

/**
 * findGiving's figures of the donor and its `members` (an int8[] expression, empty unless the
 * donor is a Household), with `member_ids`, as one SELECT that reads the members once.
 */
function givingSelect(
  institutionId: number,
  donorId: number,
  members: FragmentSqlToken | ReturnType<typeof sql.array>,
): FragmentSqlToken {
  return sql.fragment`
    WITH givers AS MATERIALIZED (
      SELECT members, ARRAY[${donorId}::bigint] || members AS ids
      FROM (SELECT ${members}::bigint[] AS members) AS listed)
    SELECT (SELECT members FROM givers) AS member_ids,
           hard.total_amount, hard.gift_count, dates.first_gift_date, dates.last_gift_date,
           soft.soft_credit_total, soft.soft_credit_count, pledged.pledged_outstanding
    FROM (SELECT coalesce(sum(total), 0)::text AS total_amount,
                 (coalesce(sum(gift_count), 0) + (${uncountedGifts(institutionId)}))::int
                   AS gift_count
          FROM giving_months
          WHERE institution_id = ${institutionId} AND level = 'donor'
            AND unit_id = ANY(${giverIds})) hard,
         (SELECT min(first.gift_date)::text AS first_gift_date,
                 max(last.gift_date)::text AS last_gift_date
          FROM unnest(${giverIds}) AS giver(id)
          CROSS JOIN LATERAL (${postedGiftDate(institutionId, sql.fragment`ASC`)}) first
          CROSS JOIN LATERAL (${postedGiftDate(institutionId, sql.fragment`DESC`)}) last) dates,
         (SELECT coalesce(sum(${countedSoftCredit}), 0)::text AS soft_credit_total,
                 count(*)::int AS soft_credit_count
          FROM gifts g, jsonb_array_elements(g.soft_credits) AS credit
          WHERE g.institution_id = ${institutionId}
            AND g.soft_credit_donor_ids <> '{}'
            AND g.soft_credit_donor_ids @> ARRAY[${donorId}::bigint] AND g.status = 'posted'
            AND g.base_amount IS NOT NULL
            AND NOT g.donor_id = ANY(${giverIds})
            AND (credit ->> 'donor_id')::bigint = ${donorId}) soft,
         (SELECT coalesce(sum(base_balance), 0)::text AS pledged_outstanding
          FROM pledges
          WHERE institution_id = ${institutionId} AND donor_id = ANY(${giverIds})
            AND status = 'open') pledged`;
}

const givingWithMembersRow = givingRow.extend({ member_ids: z.array(z.coerce.number()) });

/**
 * What GET /donors/{id} adds to the donor's row: its giving and its current members (none
 * unless it is a Household: only a Household has members), in one statement, so that a read
 * waits for one round trip instead of two and `member_ids` and `giving` are of one snapshot.
 */
export async function findGivingWithMembers(
  db: CommonQueryMethods,
  institutionId: number,
  donorId: number,
): Promise<{ giving: GivingRow; memberIds: number[] }> {
  const members = sql.fragment`ARRAY(
    SELECT id FROM donors
    WHERE institution_id = ${institutionId} AND household_id = ${donorId}
    ORDER BY id)`;
  const { member_ids: memberIds, ...giving } = await db.one(
    sql.type(givingWithMembersRow)`${givingSelect(institutionId, donorId, members)}`,
  );
  return { giving, memberIds };
}

/** A household's current members, oldest first (by id), as `member_ids` lists them. */
export async function findMemberIds(
  db: CommonQueryMethods,
  institutionId: number,
  householdId: number,
): Promise<number[]> {
  const ids = await db.anyFirst(sql.unsafe`
    SELECT id FROM donors
    WHERE institution_id = ${institutionId} AND household_id = ${householdId}
    ORDER BY id`);
  return ids.map(Number);
}

/**
 * How many members a household has: with any, it may be neither deleted nor given another role;
 * with maxHouseholdMembers, no one else joins.
 */
export async function countMembers(
  db: CommonQueryMethods,
  institutionId: number,
  householdId: number,
): Promise<number> {
  return Number(
    await db.oneFirst(sql.unsafe`SELECT household_member_count(${institutionId}, ${householdId})`),
  );
}

/** What a join to a household is judged by (findHouseholdToJoin). */
export interface HouseholdToJoin {
  role: string;
  status: string;
  /** Its current members; null when the donor is not a Household. */
  members: number | null;
}

/**
 * The donor a join names, read under `lock`, and its members counted after the lock (by
 * household_member_count, whose VOLATILE query takes a snapshot of its own when it is called):
 * a join that waited for another join to commit counts the member that one added. The locked
 * row is the household as last committed, whatever it waited for. Null when the institution has
 * no such donor.
 */
export async function findHouseholdToJoin(
  db: CommonQueryMethods,
  institutionId: number,
  householdId: number,
  lock: FragmentSqlToken,
): Promise<HouseholdToJoin | null> {
  return db.maybeOne(sql.type(
    z.object({ role: z.string(), status: z.string(), members: z.coerce.number().nullable() }),
  )`
    WITH household AS MATERIALIZED (
      SELECT id, role, status FROM donors
      WHERE institution_id = ${institutionId} AND id = ${householdId} ${lock})
    SELECT role, status,
           CASE WHEN role = 'Household'
                THEN household_member_count(${institutionId}, id) END AS members
    FROM household`);
}

/**
 * findHouseholdToJoin's judgement as an insert's condition (RecordCheck.insertGuards): the
 * donor is a Household, neither merged nor erased, with room for another member, read under
 * FOR NO KEY UPDATE and counted after the lock. CASE, not AND, so that the count runs only
 * after the lock is held.
 */
export function householdTakesMember(
  institutionId: number,
  householdId: number,
  maxMembers: number,
): FragmentSqlToken {
  return sql.fragment`CASE WHEN EXISTS (
      SELECT FROM donors h
      WHERE h.institution_id = ${institutionId} AND h.id = ${householdId}
        AND h.role = 'Household' AND h.status NOT IN ('merged', 'erased')
      FOR NO KEY UPDATE)
    THEN household_member_count(${institutionId}, ${householdId}) < ${maxMembers}
    ELSE false END`;
}

/**
 * Whether any gift of the institution names the donor (as its donor or in a soft credit), or
 * any pledge: records a donor cannot be deleted from under.
 */
export function donorHasGifts(
  db: CommonQueryMethods,
  institutionId: number,
  donorId: number,
): Promise<boolean> {
  return db.exists(sql.unsafe`
    SELECT 1 FROM gifts
    WHERE institution_id = ${institutionId}
      AND (donor_id = ${donorId} OR (soft_credit_donor_ids <> '{}'
               AND soft_credit_donor_ids @> ARRAY[${donorId}::bigint]))
    UNION ALL
    SELECT 1 FROM pledges WHERE institution_id = ${institutionId} AND donor_id = ${donorId}`);
}

export async function deleteDonor(
  db: CommonQueryMethods,
  institutionId: number,
  id: number,
): Promise<void> {
  await db.query(
    sql.unsafe`DELETE FROM donors WHERE institution_id = ${institutionId} AND id = ${id}`,
  );
}

/**
 * constituents.md §3: a donor who has died gives no more. Pauses the donor's active recurring
 * gifts (paused and cancelled ones stay as they are) and answers them as they now are, by id.
 */
export async function pauseActiveRecurringGifts(
  db: CommonQueryMethods,
  institutionId: number,
  donorId: number,
): Promise<RecurringGiftRow[]> {
  const rows = await db.any(sql.type(recurringGiftTable.row)`
    UPDATE recurring_gifts SET status = 'paused', updated_at = now()
    WHERE institution_id = ${institutionId} AND donor_id = ${donorId} AND status = 'active'
    RETURNING ${columnsOf(recurringGiftTable)}`);
  return [...(rows as readonly RecurringGiftRow[])].sort((a, b) => a.id - b.id);
}

/**
 * The donor's status as last committed. Read after the caller's lock on the donor (KEY SHARE,
 * which waits for a PATCH holding it FOR UPDATE), it sees that PATCH's outcome.
 */
export function findDonorStatus(
  db: CommonQueryMethods,
  institutionId: number,
  donorId: number,
): Promise<string | null> {
  return db.maybeOneFirst(sql.type(z.object({ status: z.string() }))`
    SELECT status FROM donors WHERE institution_id = ${institutionId} AND id = ${donorId}`);
}

/**
 * The one lock order of writes that name donors (constituents.md §5, docs/merging-donors.md):
 * the donors first, in one statement, lower id first, before any other row. A new gift, pledge or
 * recurring gift holds the donors it names FOR KEY SHARE until it commits; a merge holds its two
 * FOR UPDATE, which waits for those writes and makes later ones wait for it (they then read the
 * source merged: `reference_inactive`). Relationships hold their two FOR NO KEY UPDATE in the
 * same order. A read-only dry run takes no lock.
 */
export async function holdDonors(
  ctx: Pick<CommandContext, 'db' | 'institution' | 'dryRun'>,
  ids: readonly number[],
  mode: 'share' | 'update' = 'share',
): Promise<void> {
  if (ctx.dryRun || !ids.length) return;
  const lock = mode === 'share' ? sql.fragment`FOR KEY SHARE` : sql.fragment`FOR UPDATE`;
  await ctx.db.query(sql.unsafe`
    SELECT id FROM donors
    WHERE institution_id = ${ctx.institution.id}
      AND id = ANY(${sql.array([...new Set(ids)], 'int8')})
    ORDER BY id ${lock}`);
}
