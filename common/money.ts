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

/** An exchange rate (numeric(18,6) text or a validated number) in millionths, exactly. */
export function toMicros(rate: string | number): bigint {
  const match = /^(\d+)(?:\.(\d{1,6}))?$/.exec(String(rate));
  if (!match) throw new Error(`not an exchange rate: ${String(rate)}`);
  return BigInt(match[1] ?? '0') * 1_000_000n + BigInt((match[2] ?? '').padEnd(6, '0'));
}

/** A rate back to the JSON number clients see (at most 6 places). */
export const microsToNumber = (micros: bigint) => Number(micros) / 1_000_000;

/**
 * fundraising.md §2: an amount in the base currency, amount × rate rounded half-even to the
 * cent (a tie goes to the even cent, so that rounding does not drift one way over many gifts).
 */
export function baseCents(cents: bigint, rate: string | number): bigint {
  const exact = cents * toMicros(rate);
  const whole = exact / 1_000_000n;
  const rest = exact % 1_000_000n;
  if (rest * 2n > 1_000_000n || (rest * 2n === 1_000_000n && whole % 2n === 1n)) return whole + 1n;
  return whole;
}

/**
 * `total` shared among parts in proportion to their `weights`: each share rounded down to the
 * cent and the remainder on the last part, so that the shares sum exactly to `total` and none is
 * negative. No weight at all: every share 0.
 */
export function apportion(weights: readonly bigint[], total: bigint): bigint[] {
  const whole = weights.reduce((sum, weight) => sum + weight, 0n);
  if (!weights.length) return [];
  if (whole === 0n) return weights.map(() => 0n);
  const shares = weights.map((weight) => (weight * total) / whole);
  shares[shares.length - 1]! += total - shares.reduce((sum, share) => sum + share, 0n);
  return shares;
}
