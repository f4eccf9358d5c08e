import { centsToNumber, toCents } from '../../money.js';

export const frequencies = ['one_time', 'monthly', 'quarterly', 'annually'] as const;
export type Frequency = (typeof frequencies)[number];

export const MAX_INSTALLMENTS = 120;

/** One installment as stored: what is paid of it follows from the pledge's `amount_paid`. */
export interface Installment {
  number: number;
  due_on: string;
  amount: number;
}

const monthsBetween: Record<Frequency, number> = {
  one_time: 0,
  monthly: 1,
  quarterly: 3,
  annually: 12,
};

const pad = (value: number, width: number) => String(value).padStart(width, '0');

/**
 * `first` moved on by `months`, keeping its day of month but clamped to the month's last day:
 * Jan 31 + 1 month is Feb 28 (29 in a leap year), + 2 months Mar 31; Feb 29 + 12 months is
 * Feb 28. Each date is counted from the first, never from the clamped one before it.
 */
export function addMonths(first: string, months: number): string {
  const [year, month, day] = first.split('-').map(Number) as [number, number, number];
  const index = year * 12 + (month - 1) + months;
  const targetYear = Math.floor(index / 12);
  const targetMonth = (index % 12) + 1;
  // Day 0 of the next month is the last day of this one.
  const lastDay = new Date(Date.UTC(targetYear, targetMonth, 0)).getUTCDate();
  return `${pad(targetYear, 4)}-${pad(targetMonth, 2)}-${pad(Math.min(day, lastDay), 2)}`;
}

/**
 * The schedule as installments (giving.md §5): `count` amounts of the pledge split evenly in
 * cents, the cents left over on the last, so that they sum exactly to `amount`.
 */
export function expandSchedule(
  amount: number | string,
  frequency: Frequency,
  count: number,
  firstDueOn: string,
): Installment[] {
  const total = toCents(amount);
  const each = total / BigInt(count);
  const last = total - each * BigInt(count - 1);
  return Array.from({ length: count }, (_, index) => ({
    number: index + 1,
    due_on: addMonths(firstDueOn, index * monthsBetween[frequency]),
    amount: centsToNumber(index === count - 1 ? last : each),
  }));
}

export const installmentStatuses = ['due', 'partially_paid', 'paid', 'overdue'] as const;
export type InstallmentStatus = (typeof installmentStatuses)[number];

export interface InstallmentStanding extends Installment {
  amount_paid: number;
  status: InstallmentStatus;
}

/** What the pledge's installments owe on `today`, given what was paid of the pledge. */
export interface Standing {
  installments: InstallmentStanding[];
  /** The earliest installment not paid in full, while the pledge is open. */
  next_due_on: string | null;
  /** Cents of the installments due before today and not paid, while the pledge is open. */
  overdue: bigint;
}

/**
 * Payments fill the earliest installments first (giving.md §5), so what is paid of each follows
 * from the pledge's `amount_paid`. Only an open pledge is late: a written-off or cancelled one
 * owes nothing more, so its unpaid installments stay `due` (or `partially_paid`).
 */
export function standing(
  installments: readonly Installment[],
  paid: bigint,
  open: boolean,
  today: string,
): Standing {
  let left = paid;
  let next: string | null = null;
  let overdue = 0n;
  const rows = installments.map((installment): InstallmentStanding => {
    const owed = toCents(installment.amount);
    const covered = left < owed ? left : owed;
    left -= covered;
    const unpaid = owed - covered;
    let status: InstallmentStatus = covered === 0n ? 'due' : 'partially_paid';
    if (unpaid === 0n) status = 'paid';
    else if (open && installment.due_on < today) {
      status = 'overdue';
      overdue += unpaid;
    }
    if (unpaid > 0n && open) next ??= installment.due_on;
    return { ...installment, amount_paid: centsToNumber(covered), status };
  });
  return { installments: rows, next_due_on: next, overdue };
}
