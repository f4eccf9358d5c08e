import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { baseCents, centsToNumber, toCents } from '../../money.js';
import { proRata } from '../designations.js';
import { columnsOf, findRow } from '../table.js';
import { standing } from './schedule.js';
import { pledgeTable, type PledgeRow, type PledgeStatus } from './schema.js';

/**
 * What the pledge's payments have paid of it: the net amounts (after refunds) of the gifts that
 * name it and are not voided, as exact text, in the pledge's currency (every payment is in it)
 * and in the base currency (each payment at its own rate).
 */
const paidOf = (db: CommonQueryMethods, institutionId: number, pledgeId: number) =>
  db.one(sql.type(z.object({ paid: z.string(), base_paid: z.string() }))`
    SELECT coalesce(sum(amount - amount_refunded), 0)::text AS paid,
           coalesce(sum(base_amount - base_amount_refunded), 0)::text AS base_paid
    FROM gifts
    WHERE institution_id = ${institutionId} AND pledge_id = ${pledgeId} AND status = 'posted'`);

/**
 * Brings a pledge's figures in line with its payments, after any change of one (a payment made,
 * changed, deleted, refunded or voided) or of the pledge itself, in the same transaction: the
 * one place where `amount_paid`, `amount_written_off`, `status` (open ⇄ fulfilled), `next_due_on`
 * and what each fund is still owed are worked out. It locks the pledge, so concurrent payments
 * take turns on it. A written-off pledge writes off whatever is not paid, so a refund or void
 * of one of its payments moves that amount to `amount_written_off`; `status` is given to set
 * written_off or cancelled.
 */
export async function settlePledge(
  db: CommonQueryMethods,
  institutionId: number,
  pledgeId: number,
  close?: { status: Extract<PledgeStatus, 'written_off' | 'cancelled'>; reason: string },
): Promise<PledgeRow> {
  return (await settlePledgeFrom(db, institutionId, pledgeId, close)).row;
}

/** settlePledge, answering also the status the pledge had before. */
export async function settlePledgeFrom(
  db: CommonQueryMethods,
  institutionId: number,
  pledgeId: number,
  close?: { status: Extract<PledgeStatus, 'written_off' | 'cancelled'>; reason: string },
): Promise<{ before: PledgeStatus; row: PledgeRow }> {
  const pledge = await findRow(db, pledgeTable, institutionId, pledgeId, sql.fragment`FOR UPDATE`);
  if (!pledge) throw new Error(`pledge ${pledgeId} is not of institution ${institutionId}`);
  const payments = await paidOf(db, institutionId, pledgeId);
  const paid = toCents(payments.paid);
  const amount = toCents(pledge.amount);
  let status = close?.status ?? pledge.status;
  if (status === 'open' || status === 'fulfilled') status = paid >= amount ? 'fulfilled' : 'open';
  const writtenOff = status === 'written_off' ? amount - paid : 0n;
  const balance = amount - paid - writtenOff;
  const open = status === 'open';
  const baseBalance = open ? baseCents(balance, pledge.exchange_rate) : 0n;
  const closing = close
    ? sql.fragment`, close_reason = ${close.reason}, closed_at = now()`
    : sql.fragment``;
  const row = (await db.one(sql.type(pledgeTable.row)`
    UPDATE pledges
    SET amount_paid = ${centsToNumber(paid).toFixed(2)}::numeric,
        amount_written_off = ${centsToNumber(writtenOff).toFixed(2)}::numeric,
        base_amount_paid = ${payments.base_paid}::numeric,
        base_balance = ${centsToNumber(baseBalance).toFixed(2)}::numeric,
        status = ${status},
        next_due_on = ${standing(pledge.installments, paid, open, '').next_due_on}::date,
        fund_outstanding = ${JSON.stringify(proRata(pledge.designations, baseBalance))}::jsonb,
        updated_at = now() ${closing}
    WHERE institution_id = ${institutionId} AND id = ${pledgeId}
    RETURNING ${columnsOf(pledgeTable)}`)) as PledgeRow;
  return { before: pledge.status, row };
}

/** Whether any gift names the pledge as its payment, whatever has become of it since. */
export function pledgeHasPayments(
  db: CommonQueryMethods,
  institutionId: number,
  pledgeId: number,
): Promise<boolean> {
  return db.exists(sql.unsafe`
    SELECT 1 FROM gifts WHERE institution_id = ${institutionId} AND pledge_id = ${pledgeId}`);
}
