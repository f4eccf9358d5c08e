import { sql } from 'slonik';
import { z } from 'zod';
import {
  dateFilter,
  enumFilter,
  idFilter,
  parseIdParameter,
  type FilterSpec,
  type ListSpec,
} from '../../pagination/listSpec.js';
import { centsToNumber } from '../../money.js';
import { collectionList } from '../table.js';
import { balanceCents, baseBalanceCents, presentPledge, standingOf } from './present.js';
import type { PledgeReceivableResponse } from './response.js';
import { pledgeIdentity, pledgeRow, pledgeStatuses, pledgeTable } from './schema.js';

/** A pledge with a designation to the fund, served by the partial GIN index. */
const fundFilter: FilterSpec = {
  description: { kind: 'id' },
  parse: parseIdParameter,
  condition: (value) =>
    sql.fragment`(fund_ids <> '{}' AND fund_ids @> ARRAY[${Number(value)}::bigint])`,
};

/**
 * An open pledge with an installment due before the date and not paid in full. Payments fill
 * the earliest installments first, so that is the earliest unpaid one, `next_due_on`.
 */
const dueBefore = dateFilter(sql.fragment`next_due_on`, '<');

export const pledgeList = collectionList(pledgeIdentity, pledgeTable, {
  present: presentPledge,
  filters: {
    donor_id: idFilter(sql.fragment`donor_id`),
    fund_id: fundFilter,
    status: enumFilter(sql.fragment`status`, pledgeStatuses),
    due_before: dueBefore,
  },
});

const receivableRow = pledgeRow.pick({
  id: true,
  donor_id: true,
  amount: true,
  currency: true,
  exchange_rate: true,
  amount_paid: true,
  amount_written_off: true,
  installments: true,
  status: true,
});
type ReceivableRow = z.infer<typeof receivableRow>;

/**
 * `GET /pledges/receivables`: what is still to come in, one row per open pledge, newest first.
 * The condition is literal SQL so that the planner matches it to the partial index on open
 * pledges.
 */
export const receivableList: ListSpec<ReceivableRow> = {
  endpoint: '/api/v1/pledges/receivables',
  from: sql.fragment`pledges`,
  institutionColumn: sql.fragment`institution_id`,
  where: sql.fragment`status = 'open'`,
  key: sql.fragment`id`,
  columns: sql.fragment`id, donor_id, amount, currency, exchange_rate, amount_paid, amount_written_off,
    installments, status`,
  row: receivableRow,
  keyOf: (row) => row.id,
  present: (row): PledgeReceivableResponse => {
    const now = standingOf(row);
    return {
      object: 'pledge_receivable',
      pledge_id: row.id,
      donor_id: row.donor_id,
      amount: Number(row.amount),
      currency: row.currency,
      balance: centsToNumber(balanceCents(row)),
      base_balance: centsToNumber(baseBalanceCents(row)),
      overdue_amount: centsToNumber(now.overdue),
      next_due_on: now.next_due_on,
    };
  },
  filters: { fund_id: fundFilter, due_before: dueBefore },
};
