/**
 * How many random cases a property test runs: `n`, scaled by PROPERTY_RUNS_SCALE (CI's second
 * pass, through PgBouncer, sets 0.5: the properties are the same, and the first pass ran them in
 * full), at least 3.
 */
export function runs(n: number): number {
  const scale = Number(process.env.PROPERTY_RUNS_SCALE ?? '1');
  return Math.max(3, Math.round(n * (Number.isFinite(scale) && scale > 0 ? scale : 1)));
}
