import { today } from '../../clock.js';
import { presentCodes } from '../campaigns/recordCoding.js';
import { baseCents, centsToNumber, toCents } from '../../money.js';
import type { PledgeResponse } from './response.js';
import { standing } from './schedule.js';
import type { PledgeRow } from './schema.js';

/** What is still to be paid, in cents. */
export const balanceCents = (
  row: Pick<PledgeRow, 'amount' | 'amount_paid' | 'amount_written_off'>,
) => toCents(row.amount) - toCents(row.amount_paid) - toCents(row.amount_written_off);

/**
 * What is still to be paid in the base currency (fundraising.md §2): the balance at the pledge's
 * rate. settlePledge stores the same figure (`base_balance`) for the totals that sum it.
 */
export const baseBalanceCents = (
  row: Pick<PledgeRow, 'amount' | 'amount_paid' | 'amount_written_off' | 'exchange_rate'>,
) => baseCents(balanceCents(row), row.exchange_rate);

/** The installments' standing as of today (the one clock), as every answer states it. */
export const standingOf = (row: Pick<PledgeRow, 'installments' | 'amount_paid' | 'status'>) =>
  standing(row.installments, toCents(row.amount_paid), row.status === 'open', today());

export function presentPledge(row: PledgeRow): PledgeResponse {
  const now = standingOf(row);
  return {
    id: row.id,
    object: 'pledge',
    donor_id: row.donor_id,
    amount: Number(row.amount),
    currency: row.currency,
    exchange_rate: Number(row.exchange_rate),
    base_amount: Number(row.base_amount),
    pledge_date: row.pledge_date,
    fund_id: row.designations.length === 1 ? row.designations[0]!.fund_id : null,
    designations: row.designations.map((part) => ({
      fund_id: part.fund_id,
      amount: part.amount,
      ...presentCodes(part),
    })),
    schedule: {
      frequency: row.schedule.frequency,
      installments: row.schedule.installments,
      first_due_on: row.schedule.first_due_on,
    },
    installments: now.installments.map((installment) => ({
      number: installment.number,
      due_on: installment.due_on,
      amount: installment.amount,
      amount_paid: installment.amount_paid,
      status: installment.status,
    })),
    amount_paid: Number(row.amount_paid),
    balance: centsToNumber(balanceCents(row)),
    amount_written_off: Number(row.amount_written_off),
    base_amount_paid: Number(row.base_amount_paid),
    base_balance: centsToNumber(baseBalanceCents(row)),
    status: row.status,
    next_due_on: now.next_due_on,
    overdue_amount: centsToNumber(now.overdue),
    note: row.note,
    close_reason: row.close_reason,
    closed_at: row.closed_at,
    campaign_id: row.campaign_id,
    appeal_id: row.appeal_id,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
