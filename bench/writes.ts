/**
 * `npm run bench:writes`: the price of the queue. Posts gifts at 50 connections with a unique
 * Idempotency-Key each, through API and worker processes, next to a bare Express + pg insert
 * measured in the same run; then replays the same keys, and repeats with two workers.
 *
 * Environment: DATABASE_URL (a server where a scratch database may be created), REDIS_URL,
 * BENCH_SECONDS (per phase, default 15), BENCH_CONNECTIONS (default 50).
 */
import autocannon from 'autocannon';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createDatabasePool } from '../common/db/pool.js';
import { createInstitution } from '../common/institutions.js';
import { createRedis } from '../common/redis.js';
import { freePort, spawnProcess, stop, until } from './processes.js';
import { createScratchDatabase } from './scratch.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 15);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
const databaseBase = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

interface Row {
  phase: string;
  requests: number;
  perSecond: number;
  p50: number;
  p99: number;
  errors: number;
}

async function load(
  phase: string,
  url: string,
  headers: Record<string, string>,
  body: string,
  nextKey: (() => string) | null,
): Promise<Row> {
  const result = await autocannon({
    url,
    connections,
    duration: seconds,
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body,
    ...(nextKey
      ? {
          requests: [
            {
              setupRequest: (request: autocannon.Request) => ({
                ...request,
                headers: { ...request.headers, 'Idempotency-Key': nextKey() },
              }),
            },
          ],
        }
      : {}),
  });
  return {
    phase,
    requests: result.requests.total,
    perSecond: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts + result.non2xx,
  };
}

async function main() {
  const scratch = await createScratchDatabase(databaseBase, 'writes');
  const prefix = `dgs-bench-${randomBytes(4).toString('hex')}`;
  const pool = await createDatabasePool(scratch.url, {
    maxPoolSize: 2,
    applicationName: 'dgs-bench',
  });
  const children: ChildProcess[] = [];
  const rows: Row[] = [];
  try {
    const { institution, apiKey } = await createInstitution(pool, 'Benchmark University', 'USD');
    const { sql } = await import('slonik');
    const donorId = await pool.oneFirst(sql.unsafe`
      INSERT INTO donors (institution_id, role, first_name, last_name, status, gives_anonymously)
      VALUES (${institution.id}, 'Individual', 'Bench', 'Donor', 'active', false) RETURNING id`);
    const body = JSON.stringify({
      donor_id: donorId,
      amount: 25.5,
      subject: 'Benchmark gift',
      gift_date: '2026-11-21',
    });
    const env = {
      DATABASE_URL: scratch.url,
      REDIS_URL: redisUrl,
      CURSOR_SECRET: randomBytes(32).toString('hex'),
      QUEUE_PREFIX: prefix,
      LOG_LEVEL: 'warn',
      PORT: '0',
    };

    const basePort = await freePort();
    const baseline = spawnProcess('bench/baselineServer.js', {
      ...env,
      PORT: String(basePort),
      BENCH_INSTITUTION_ID: String(institution.id),
    });
    children.push(baseline);
    const baseUrl = `http://127.0.0.1:${basePort}/gifts`;
    const post = (url: string, headers: Record<string, string>) =>
      fetch(url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', ...headers },
        body,
      }).then((response) => response.status === 201);
    await until('the baseline server', () => post(baseUrl, {}));
    rows.push(await load('baseline: express + pg insert', baseUrl, {}, body, null));
    await stop(baseline);

    const apiPort = await freePort();
    children.push(spawnProcess('api/main.js', { ...env, PORT: String(apiPort) }));
    children.push(spawnProcess('worker/main.js', env));
    const url = `http://127.0.0.1:${apiPort}/api/v1/gifts`;
    const auth = { 'X-Service-API-Key': apiKey.key };
    await until('the API and a worker', () => post(url, auth));

    let issued = 0;
    rows.push(await load('full path, 1 worker', url, auth, body, () => `bench-${issued++}`));
    const firstRun = issued;
    let replayed = 0;
    rows.push(
      await load('replays of those keys', url, auth, body, () => `bench-${replayed++ % firstRun}`),
    );

    children.push(spawnProcess('worker/main.js', env));
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    rows.push(await load('full path, 2 workers', url, auth, body, () => `bench-${issued++}`));

    const stored = Number(await pool.oneFirst(sql.unsafe`SELECT count(*) FROM gifts`));
    const keyed = Number(
      await pool.oneFirst(sql.unsafe`SELECT count(*) FROM write_receipts WHERE source = 'client'`),
    );
    print(rows, stored, keyed);
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

function print(rows: Row[], stored: number, keyed: number) {
  const baseline = rows[0]!.perSecond;
  const table = rows.map((row) => ({
    phase: row.phase,
    'writes/s': Math.round(row.perSecond),
    'vs baseline': `${(row.perSecond / baseline).toFixed(2)}x`,
    'p50 ms': row.p50,
    'p99 ms': row.p99,
    requests: row.requests,
    errors: row.errors,
  }));
  console.log(
    `\nWrite benchmark: ${connections} connections, ${seconds} s per phase, ${new Date().toISOString()}`,
  );
  console.table(table);
  console.log(
    `gifts stored by the full path and baseline: ${stored}; idempotency receipts: ${keyed}`,
  );
  const full = rows[1]!;
  console.log(
    `goal: full path >= 0.35x baseline with zero errors: ${full.perSecond / baseline >= 0.35 && full.errors === 0 ? 'met' : 'NOT met'}; ` +
      `replays faster than first writes: ${rows[2]!.perSecond > full.perSecond ? 'yes' : 'no'}`,
  );
}

await main();
