/**
 * Exact money arithmetic. Amounts travel as JSON numbers with at most 2 decimal places and are
 * stored as numeric(14,2); sums and comparisons are made in integer cents so that no rounding
 * error can make totals disagree.
 */

/** Exact cents of a money value: numeric text from Postgres ("1234.50") or a validated number. */
export function toCents(value: string | number): bigint {
  const match = /^(\d+)(?:\.(\d{1,2}))?$/.exec(String(value));
  if (!match) throw new Error(`not a money value: ${String(value)}`);
  return BigInt(match[1] ?? '0') * 100n + BigInt((match[2] ?? '').padEnd(2, '0'));
}

/** Cents back to the JSON number clients see (at most 2 places, exact below 2^53 cents). */
export const centsToNumber = (cents: bigint) => Number(cents) / 100;

/** The exact sum of money values, in cents. */
export const sumCents = (values: readonly (string | number)[]) =>
  values.reduce<bigint>((sum, value) => sum + toCents(value), 0n);
