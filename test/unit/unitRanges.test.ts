// Retention sums a level's units in ranges of unit ids (common/reports/retention.ts): every unit
// must fall in exactly one range, or the report would count it twice or not at all.
import fc from 'fast-check';
import { unitRanges } from '../../common/reports/retention.js';

test('the ranges cover low to high, each unit once, none empty, at most 8', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 2 ** 40 }),
      fc.integer({ min: 0, max: 2 ** 40 }),
      (low, span) => {
        const high = low + span;
        const ranges = unitRanges(low, high);
        expect(ranges.length).toBeGreaterThanOrEqual(1);
        expect(ranges.length).toBeLessThanOrEqual(8);
        expect(ranges[0]![0]).toBe(low);
        expect(ranges.at(-1)![1]).toBe(high + 1);
        for (const [index, [from, to]] of ranges.entries()) {
          expect(to).toBeGreaterThan(from);
          if (index > 0) expect(from).toBe(ranges[index - 1]![1]);
        }
      },
    ),
  );
});

test('a single unit is one range of it', () => {
  expect(unitRanges(42, 42)).toEqual([[42, 43]]);
  expect(unitRanges(1, 3)).toEqual([
    [1, 2],
    [2, 3],
    [3, 4],
  ]);
});
