import type { RecordCheck } from '../commands/resourceCommands.js';
import type { FieldError } from '../errors.js';
import { centsToNumber, sumCents, toCents } from '../money.js';

/** One part of a split: a fund and the amount it receives (giving.md §1). */
export interface Designation {
  fund_id: number;
  amount: number;
}

/** A record whose amount may be split across funds: a gift, a recurring gift. */
type SplitCheck = RecordCheck<{ designations: readonly { fund_id: number; amount: number }[] }>;

const problem = (param: string, code: FieldError['code'], message: string): FieldError => ({
  param,
  code,
  message,
});

/**
 * The split the record ends with (giving.md §1): `designations` as sent, or `fund_id` as one
 * designation of the whole amount, or (on an update that sends neither) the record's own, whose
 * one designation follows a new amount; on a create that sends neither, `inherited` (a pledge
 * payment's share of its pledge's split) or none. Null when a field it depends on is invalid.
 */
function designationsOf(
  check: SplitCheck,
  inherited: readonly Designation[],
): Designation[] | null {
  const { record, validation, existing, valid } = check;
  const sent = (name: string) => validation.sent.has(name);
  if (sent('designations'))
    return valid('designations') ? (record.designations as Designation[]) : null;
  if (sent('fund_id')) {
    if (record.fund_id === null) return [];
    return valid('fund_id') && valid('amount')
      ? [{ fund_id: record.fund_id as number, amount: record.amount as number }]
      : null;
  }
  if (!existing) return [...inherited];
  const own = existing.designations.map(({ fund_id, amount }) => ({ fund_id, amount }));
  if (own.length === 1 && valid('amount')) return [{ ...own[0]!, amount: record.amount as number }];
  return own;
}

/**
 * Designations: each fund once; the parts sum to the amount; `fund_id` and `designations` not
 * both. Settles `record.designations` and returns the funds to look up: those new to the record,
 * which must be open funds of the institution (a fund it already has may have closed since, and
 * so may the funds `inherited` from a pledge, which the pledge already holds).
 */
export function checkDesignations(
  check: SplitCheck,
  inherited: readonly Designation[] = [],
): { id: number; param: string }[] {
  const { record, validation, existing, valid } = check;
  if (validation.sent.has('fund_id') && validation.sent.has('designations')) {
    validation.errors.push(
      problem('fund_id', 'not_allowed', 'cannot be sent with designations, which name the funds'),
    );
    return [];
  }
  const parts = designationsOf(check, inherited);
  if (parts === null) {
    // The amount is invalid, so there is no split; the fund named is still checked.
    return validation.sent.has('fund_id') && valid('fund_id')
      ? [{ id: record.fund_id as number, param: 'fund_id' }]
      : [];
  }
  record.designations = parts;
  const shorthand = !validation.sent.has('designations');
  const paramOf = (index: number) => (shorthand ? 'fund_id' : `designations.${index}.fund_id`);
  const seen = new Set<number>();
  parts.forEach((part, index) => {
    if (seen.has(part.fund_id))
      validation.errors.push(
        problem(paramOf(index), 'already_in_use', 'names a fund that another designation names'),
      );
    seen.add(part.fund_id);
  });
  if (parts.length && valid('amount')) {
    const total = sumCents(parts.map((part) => part.amount));
    if (total !== toCents(record.amount as number))
      validation.errors.push(
        problem(
          'designations',
          'designation_total_mismatch',
          `must sum to the amount of ${record.amount as number}, not ${centsToNumber(total)}` +
            (validation.sent.has('designations') ? '' : ': send new designations with the amount'),
        ),
      );
  }
  const held = new Set(
    [...(existing?.designations ?? []), ...inherited].map((part) => part.fund_id),
  );
  return parts
    .map((part, index) => ({ id: part.fund_id, param: paramOf(index) }))
    .filter((entry) => !held.has(entry.id));
}

/** Whether two splits name the same funds, in the same order, for the same amounts. */
export const sameSplit = (a: readonly Designation[], b: readonly Designation[]) =>
  a.length === b.length &&
  a.every(
    (part, index) =>
      part.fund_id === b[index]!.fund_id && toCents(part.amount) === toCents(b[index]!.amount),
  );

/**
 * `total` (cents) split across `parts` in proportion to their amounts: each part its share
 * rounded down to the cent, the cents left over to the last part, so the shares sum exactly
 * to `total`; parts whose share is nothing are left out. How a payment without designations
 * takes its pledge's split, and how a pledge's balance is owed to its funds.
 */
export function proRata(parts: readonly Designation[], total: bigint): Designation[] {
  const whole = sumCents(parts.map((part) => part.amount));
  if (!parts.length || whole === 0n) return [];
  const shares = parts.map((part) => (toCents(part.amount) * total) / whole);
  const rest = total - shares.reduce((sum, share) => sum + share, 0n);
  shares[shares.length - 1]! += rest;
  return parts
    .map((part, index) => ({ fund_id: part.fund_id, amount: centsToNumber(shares[index]!) }))
    .filter((part) => part.amount > 0);
}
