import type { FundDetailResponse, FundResponse } from './response.js';
import type { FundRow, FundTotalsRow } from './schema.js';

/** `totals` only where they were read: on GET /funds/{id}. */
export const presentFund = (
  row: FundRow,
  totals?: FundTotalsRow,
): FundResponse | FundDetailResponse => ({
  id: row.id,
  object: 'fund',
  name: row.name,
  code: row.code,
  description: row.description,
  restriction: row.restriction,
  endowed: row.endowed,
  award_limit: row.award_limit === null ? null : Number(row.award_limit),
  status: row.status,
  ...(totals
    ? {
        totals: {
          gifts_received: Number(totals.gifts_received),
          awards_committed: Number(totals.awards_committed),
          award_capacity_remaining:
            totals.award_capacity_remaining === null
              ? null
              : Number(totals.award_capacity_remaining),
          pledged_outstanding: Number(totals.pledged_outstanding),
        },
      }
    : {}),
  created_at: row.created_at,
  updated_at: row.updated_at,
});
