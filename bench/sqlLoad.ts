import type pg from 'pg';

export interface LoadResult {
  requests: number;
  requestsPerSecond: number;
  /** milliseconds */
  p50: number;
  p99: number;
  mean: number;
  errors: number;
  /** Bytes per response (HTTP measurements only). */
  bytes?: number;
}

export interface SqlStep {
  text: string;
  values: readonly unknown[];
}

export interface SqlLoadOptions {
  connections: number;
  durationSeconds: number;
}

function percentile(sorted: readonly number[], fraction: number): number {
  if (sorted.length === 0) return Number.NaN;
  const index = Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1);
  return sorted[Math.max(0, index)]!;
}

/**
 * The SQL baseline: `connections` loops, each with a connection of its own, run the steps (one
 * "request") back to back for the duration, like autocannon's connections do over HTTP.
 */
export async function runSqlLoad(
  pool: pg.Pool,
  steps: readonly SqlStep[],
  options: SqlLoadOptions,
): Promise<LoadResult> {
  const latencies: number[] = [];
  let errors = 0;
  const started = performance.now();
  const deadline = started + options.durationSeconds * 1000;
  const loop = async () => {
    const client = await pool.connect();
    try {
      while (performance.now() < deadline) {
        const begin = performance.now();
        try {
          for (const step of steps) await client.query(step.text, [...step.values]);
          latencies.push(performance.now() - begin);
        } catch {
          errors += 1;
        }
      }
    } finally {
      client.release();
    }
  };
  await Promise.all(Array.from({ length: options.connections }, loop));
  const elapsedSeconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const total = latencies.reduce((sum, value) => sum + value, 0);
  return {
    requests: latencies.length,
    requestsPerSecond: latencies.length / elapsedSeconds,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    mean: latencies.length ? total / latencies.length : Number.NaN,
    errors,
  };
}
