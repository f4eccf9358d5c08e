import type { GivingStatementResponse } from './response.js';
import type { GivingStatementRow } from './schema.js';

export const statementNumber = (year: number, seq: number) => `${year}-${seq}`;

export const presentGivingStatement = (row: GivingStatementRow): GivingStatementResponse => ({
  id: row.id,
  object: 'giving_statement',
  number: statementNumber(row.year, row.seq),
  donor_id: row.donor_id,
  year: row.year,
  period: row.period,
  period_start: row.period_start,
  period_end: row.period_end,
  status: row.status,
  superseded_by_id: row.superseded_by_id,
  run_id: row.run_id,
  donor_name: row.donor_name,
  donor_address: row.donor_address,
  currency: row.currency,
  lines: row.lines.map((line) => ({
    gift_id: line.gift_id,
    gift_date: line.gift_date,
    receipt_number: line.receipt_number,
    currency: line.currency,
    amount: Number(line.amount),
    benefit_amount: Number(line.benefit_amount),
    deductible_amount: Number(line.deductible_amount),
  })),
  totals: row.totals.map((total) => ({
    currency: total.currency,
    amount: Number(total.amount),
    deductible_amount: Number(total.deductible_amount),
  })),
  base_total: Number(row.base_total),
  issued_on: row.issued_on,
  created_at: row.created_at,
  updated_at: row.updated_at,
});
