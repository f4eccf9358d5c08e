/**
 * What the benchmarks that run the service as processes share: a scratch database, a queue
 * prefix of their own in Redis, the environment the API and workers start with, and a clean-up
 * that stops every process and leaves nothing behind, whatever happened.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { createDatabasePool } from '../common/db/pool.js';
import { createRedis } from '../common/redis.js';
import { spawnProcess, stop } from './processes.js';
import { createScratchDatabase } from './scratch.js';

export const databaseBase =
  process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

const idRow = z.object({ id: z.number() });
const DONOR_CHUNK = 10_000;

export interface BenchStack {
  databaseUrl: string;
  /** A small pool for fixtures and read-backs. */
  pool: DatabasePool;
  /** The API's and workers' environment: the scratch database, own prefix, no rate limit. */
  env: Record<string, string>;
  /** Starts `dist/<entry>` with the stack's environment (and `extra`); stopped at the end. */
  spawn(entry: string, extra?: Record<string, string>): ChildProcess;
}

export async function withBenchStack(
  label: string,
  run: (stack: BenchStack) => Promise<void>,
): Promise<void> {
  const scratch = await createScratchDatabase(databaseBase, label);
  const prefix = `dgs-bench-${randomBytes(4).toString('hex')}`;
  const pool = await createDatabasePool(scratch.url, {
    maxPoolSize: 2,
    applicationName: 'dgs-bench',
  });
  const children: ChildProcess[] = [];
  const env = {
    DATABASE_URL: scratch.url,
    REDIS_URL: redisUrl,
    CURSOR_SECRET: randomBytes(32).toString('hex'),
    QUEUE_PREFIX: prefix,
    LOG_LEVEL: 'warn',
    PORT: '0',
    // One key at full speed: measured with the limiter running, at a ceiling it never reaches.
    RATE_LIMIT_PER_SECOND: '1000000',
  };
  try {
    await run({
      databaseUrl: scratch.url,
      pool,
      env,
      spawn(entry, extra = {}) {
        const child = spawnProcess(entry, { ...env, ...extra });
        children.push(child);
        return child;
      },
    });
  } finally {
    await Promise.all(children.filter((child) => child.exitCode === null).map(stop));
    await pool.end();
    const redis = createRedis(redisUrl, 'blocking');
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
    await scratch.drop();
  }
}

/** Fixture donors and funds of an institution, inserted directly (only the API is measured). */
export async function insertBenchRecords(
  pool: DatabasePool,
  institutionId: number,
  counts: { donors: number; funds: number },
): Promise<{ donorIds: number[]; fundIds: number[] }> {
  // In chunks: each insert also writes the donors' duplicate-match keys, and 200,000 donors in
  // one statement run past the pool's statement timeout.
  const donorIds: number[] = [];
  for (let start = 1; start <= counts.donors; start += DONOR_CHUNK) {
    const ids = await pool.anyFirst(sql.type(idRow)`
      INSERT INTO donors (institution_id, role, first_name, last_name, status, gives_anonymously)
      SELECT ${institutionId}, 'Individual', 'Bench', 'Donor ' || n, 'active', false
      FROM generate_series(${start}::int, ${Math.min(start + DONOR_CHUNK - 1, counts.donors)}::int)
        AS n RETURNING id`);
    donorIds.push(...ids.map(Number));
  }
  const fundIds = await pool.anyFirst(sql.type(idRow)`
    INSERT INTO funds (institution_id, name, code, restriction, endowed, status)
    SELECT ${institutionId}, 'Fund ' || n, 'F' || n, 'unrestricted', false, 'active'
    FROM generate_series(1, ${counts.funds}::int) AS n RETURNING id`);
  return { donorIds, fundIds: fundIds.map(Number) };
}

/**
 * Gives the gifts and refunds a bench inserted directly in the base currency their rate (1) and
 * base amounts, as the service writes them, so that totals sum what the service would.
 */
export async function convertAtPar(pool: DatabasePool, institutionId: number): Promise<void> {
  await pool.query(sql.unsafe`
    UPDATE gifts g
    SET exchange_rate = 1, base_amount = g.amount, base_amount_refunded = g.amount_refunded,
        designations = coalesce((
          SELECT jsonb_agg(part || jsonb_build_object('base_amount', part -> 'amount',
                   'base_amount_refunded', part -> 'amount_refunded') ORDER BY ordinality)
          FROM jsonb_array_elements(g.designations) WITH ORDINALITY AS t(part, ordinality)), '[]'),
        soft_credits = coalesce((
          SELECT jsonb_agg(credit || jsonb_build_object('base_amount', credit -> 'amount')
                   ORDER BY ordinality)
          FROM jsonb_array_elements(g.soft_credits) WITH ORDINALITY AS t(credit, ordinality)), '[]')
    WHERE g.institution_id = ${institutionId} AND g.exchange_rate IS NULL`);
  await pool.query(sql.unsafe`
    UPDATE gift_refunds SET base_amount = amount
    WHERE institution_id = ${institutionId} AND base_amount IS NULL`);
}
