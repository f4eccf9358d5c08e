import { z } from 'zod';
import { moneyAmount, recordIdOf, timestamps } from '../responseFields.js';
import { fundRestrictions, fundStatuses } from './schema.js';

const fundTotalsResponse = z
  .object({
    gifts_received: moneyAmount.describe(
      'The sum of the gifts designated to the fund, in the base currency: each designation’s `base_amount` net of what it gave back.',
    ),
    awards_committed: moneyAmount.describe('The sum of the live awards drawing from the fund.'),
    award_capacity_remaining: moneyAmount
      .nullable()
      .describe('award_limit less awards_committed; null when the fund has no limit.'),
    pledged_outstanding: moneyAmount.describe(
      'What open pledges designated to the fund still owe it, in the base currency: each pledge’s `base_balance` split across its designations in proportion to their amounts, rounded down to the cent, the cents left over on its last designation.',
    ),
  })
  .describe('Read-only totals, on GET /funds/{id} only.');

export const fundResponse = z.object({
  id: recordIdOf('fund'),
  object: z.literal('fund'),
  name: z.string(),
  code: z.string(),
  description: z.string().nullable(),
  restriction: z.enum(fundRestrictions),
  endowed: z.boolean(),
  award_limit: moneyAmount
    .nullable()
    .describe('The most that live awards may draw from the fund; null for no limit.'),
  status: z.enum(fundStatuses),
  ...timestamps,
});
export type FundResponse = z.infer<typeof fundResponse>;

/** GET /funds/{id}: the fund with its totals. */
export const fundDetailResponse = fundResponse.extend({ totals: fundTotalsResponse });
export type FundDetailResponse = z.infer<typeof fundDetailResponse>;
