import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { liveAwardStatuses } from '../awards/schema.js';
import { fundTotalsRow, type FundTotalsRow } from './schema.js';

/** Live awards reach a fund through their scholarship. */
const liveAwardsOfFund = (institutionId: number, fundId: number) => sql.fragment`
  awards a JOIN scholarships s ON s.institution_id = a.institution_id AND s.id = a.scholarship_id
  WHERE a.institution_id = ${institutionId} AND s.fund_id = ${fundId}
    AND a.status = ANY(${sql.array([...liveAwardStatuses], 'text')})`;

/** What the fund's live awards commit, as exact numeric text, leaving out one award if named. */
export function committedAwards(
  db: CommonQueryMethods,
  institutionId: number,
  fundId: number,
  exceptAwardId: number | null = null,
): Promise<string> {
  return db.oneFirst(sql.type(z.object({ committed: z.string() }))`
    SELECT coalesce(sum(a.amount), 0)::text AS committed
    FROM ${liveAwardsOfFund(institutionId, fundId)} AND a.id IS DISTINCT FROM ${exceptAwardId}`);
}

/**
 * What the fund received (giving.md §1: its designations of gifts that are not voided, net of
 * what each gave back), its live awards and what its limit leaves, and its share of what open
 * pledges still owe (giving.md §5), as exact text. Money is summed in the base currency
 * (fundraising.md §2): base amounts of designations, base balances of pledges.
 */
export function findFundTotals(
  db: CommonQueryMethods,
  institutionId: number,
  fundId: number,
): Promise<FundTotalsRow> {
  return db.one(sql.type(fundTotalsRow)`
    SELECT gifts.received::text AS gifts_received, awards.committed::text AS awards_committed,
           (f.award_limit - awards.committed)::text AS award_capacity_remaining,
           pledged.outstanding::text AS pledged_outstanding
    FROM funds f,
      LATERAL (SELECT coalesce(sum((part ->> 'base_amount')::numeric
                                   - (part ->> 'base_amount_refunded')::numeric), 0) AS received
               FROM gifts g, jsonb_array_elements(g.designations) AS part
               WHERE g.institution_id = ${institutionId}
                 AND g.fund_ids <> '{}' AND g.fund_ids @> ARRAY[${fundId}::bigint] AND g.status = 'posted'
                 AND g.base_amount IS NOT NULL
                 AND (part ->> 'fund_id')::bigint = ${fundId}) gifts,
      LATERAL (SELECT coalesce(sum(a.amount), 0) AS committed
               FROM ${liveAwardsOfFund(institutionId, fundId)}) awards,
      -- settlePledge keeps each open pledge's balance split across its funds.
      LATERAL (SELECT coalesce(sum((part ->> 'amount')::numeric), 0) AS outstanding
               FROM pledges p, jsonb_array_elements(p.fund_outstanding) AS part
               WHERE p.institution_id = ${institutionId} AND p.status = 'open'
                 AND p.fund_ids <> '{}' AND p.fund_ids @> ARRAY[${fundId}::bigint]
                 AND (part ->> 'fund_id')::bigint = ${fundId}) pledged
    WHERE f.institution_id = ${institutionId} AND f.id = ${fundId}`);
}
