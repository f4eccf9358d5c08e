import fc from 'fast-check';
import { proRata } from '../../common/resources/designations.js';
import { addMonths, expandSchedule, standing } from '../../common/resources/pledges/schedule.js';
import { toCents } from '../../common/money.js';

/** The schedule and allocation arithmetic of pledges on their own (giving.md §5). */

test.each([
  ['2026-01-31', 1, '2026-02-28'],
  ['2024-01-31', 1, '2024-02-29'],
  ['2026-01-31', 2, '2026-03-31'],
  ['2026-01-30', 1, '2026-02-28'],
  ['2026-11-30', 3, '2027-02-28'],
  ['2024-02-29', 12, '2025-02-28'],
  ['2024-02-29', 48, '2028-02-29'],
  ['2026-12-15', 1, '2027-01-15'],
  ['2026-05-31', 120 * 12, '2146-05-31'],
])('%s + %i months is %s', (first, months, expected) => {
  expect(addMonths(first, months)).toBe(expected);
});

test('installments sum exactly to the amount, evenly in cents with the rest on the last', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 120 }),
      fc.integer({ min: 0, max: 1_000_000_00 }),
      (count, extra) => {
        const cents = count + extra;
        const rows = expandSchedule((cents / 100).toFixed(2), 'monthly', count, '2026-01-31');
        const amounts = rows.map((row) => toCents(row.amount));
        expect(amounts.reduce((a, b) => a + b, 0n)).toBe(BigInt(cents));
        expect(new Set(amounts.slice(0, -1)).size).toBeLessThanOrEqual(1);
        expect(amounts.at(-1)! - amounts[0]!).toBeLessThan(BigInt(count));
        expect(amounts.every((amount) => amount > 0n)).toBe(true);
      },
    ),
  );
});

test('payments fill the earliest installments; only an open pledge is late', () => {
  const rows = expandSchedule(100, 'monthly', 3, '2026-01-31');
  const paid = standing(rows, 4000n, true, '2026-03-01');
  expect(paid.installments.map((row) => [row.amount_paid, row.status])).toEqual([
    [33.33, 'paid'],
    [6.67, 'overdue'],
    [0, 'due'],
  ]);
  expect([paid.next_due_on, paid.overdue]).toEqual(['2026-02-28', 2666n]);
  const closed = standing(rows, 4000n, false, '2026-03-01');
  expect(closed.installments.map((row) => row.status)).toEqual(['paid', 'partially_paid', 'due']);
  expect([closed.next_due_on, closed.overdue]).toEqual([null, 0n]);
});

test('a pro-rata split sums exactly, rounds down per part and leaves the rest on the last', () => {
  expect(
    proRata(
      [
        { fund_id: 1, amount: 66.67 },
        { fund_id: 2, amount: 33.33 },
      ],
      4000n,
    ),
  ).toEqual([
    { fund_id: 1, amount: 26.66 },
    { fund_id: 2, amount: 13.34 },
  ]);
  fc.assert(
    fc.property(
      fc.array(fc.integer({ min: 1, max: 10_000_00 }), { minLength: 1, maxLength: 20 }),
      fc.double({ min: 0, max: 1, noNaN: true }),
      (parts, share) => {
        const whole = parts.reduce((a, b) => a + b, 0);
        const total = BigInt(Math.floor(whole * share));
        const split = proRata(
          parts.map((cents, index) => ({ fund_id: index + 1, amount: cents / 100 })),
          total,
        );
        expect(split.reduce((sum, part) => sum + toCents(part.amount), 0n)).toBe(total);
        expect(split.every((part) => part.amount > 0)).toBe(true);
      },
    ),
  );
});
