/**
 * `npm run bench:soak`: does anything creep? Mixed reads and writes for five minutes against an
 * API and a worker process (a scratch database, a queue prefix of its own), sampling every 10 s
 * the resident memory of both processes, the Redis keys under the queue prefix and the Postgres
 * connections to the scratch database; then a table of the samples and a verdict per series.
 *
 * Environment: DATABASE_URL (a server where a scratch database may be created), REDIS_URL,
 * SOAK_SECONDS (default 300), SOAK_RATE (requests per second, default 100), SOAK_CLIENTS
 * (concurrent clients, default 8), SOAK_SAMPLE_SECONDS (default 10).
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { sql } from 'slonik';
import { createDatabasePool } from '../common/db/pool.js';
import { createInstitution } from '../common/institutions.js';
import { FINISHED_RETENTION_SECONDS } from '../common/queue.js';
import { createRedis, type Redis } from '../common/redis.js';
import { freePort, spawnProcess, stop, until } from './processes.js';
import { createScratchDatabase } from './scratch.js';

const seconds = Number(process.env.SOAK_SECONDS ?? 300);
const rate = Number(process.env.SOAK_RATE ?? 100);
const clients = Number(process.env.SOAK_CLIENTS ?? 8);
const sampleEvery = Number(process.env.SOAK_SAMPLE_SECONDS ?? 10) * 1000;
const databaseBase = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** The processes' own settings, which bound their Postgres connections. */
const API_POOL = 10;
const WORKER_CONCURRENCY = 8;

interface Sample {
  at: number;
  apiRssMb: number;
  workerRssMb: number;
  redisKeys: number;
  pgConnections: number;
  requests: number;
  errors: number;
  /** Write jobs queued in the last retention window (completed jobs are kept that long). */
  retainedJobs: number;
}

/** Resident memory of a process in MiB, from /proc/<pid>/status. */
async function rssMb(pid: number | undefined): Promise<number> {
  if (pid === undefined) return Number.NaN;
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const kb = Number(/^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1] ?? Number.NaN);
  return Math.round((kb / 1024) * 10) / 10;
}

/** Keys under the prefix (DBSIZE would count everyone's keys on a shared Redis). */
async function countKeys(redis: Redis, prefix: string): Promise<number> {
  let cursor = '0';
  let count = 0;
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    count += keys.length;
    cursor = next;
  } while (cursor !== '0');
  return count;
}

async function deleteKeys(redis: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    if (keys.length) await redis.del(...keys);
    cursor = next;
  } while (cursor !== '0');
}

const average = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;

async function main() {
  const scratch = await createScratchDatabase(databaseBase, 'soak');
  const prefix = `dgs-soak-${randomBytes(4).toString('hex')}`;
  const pool = await createDatabasePool(scratch.url, { maxPoolSize: 2, applicationName: 'soak' });
  const redis = createRedis(redisUrl, 'blocking');
  const children: ChildProcess[] = [];
  try {
    const { institution, apiKey } = await createInstitution(pool, 'Soak University', 'USD');
    const port = await freePort();
    const env = {
      DATABASE_URL: scratch.url,
      REDIS_URL: redisUrl,
      CURSOR_SECRET: randomBytes(32).toString('hex'),
      QUEUE_PREFIX: prefix,
      LOG_LEVEL: 'warn',
      PORT: String(port),
      DATABASE_POOL_SIZE: String(API_POOL),
      RATE_LIMIT_PER_SECOND: '1000000',
      WORKER_CONCURRENCY: String(WORKER_CONCURRENCY),
    };
    const api = spawnProcess('api/main.js', env);
    const worker = spawnProcess('worker/main.js', env);
    children.push(api, worker);
    const base = `http://127.0.0.1:${port}/api/v1`;
    const headers = { 'Content-Type': 'application/json', 'X-Service-API-Key': apiKey.key };
    const donor = await (async () => {
      let id = 0;
      await until('the API and a worker', async () => {
        const response = await fetch(`${base}/donors`, {
          method: 'POST',
          headers: { ...headers, 'Idempotency-Key': 'soak-donor' },
          body: JSON.stringify({
            role: 'Individual',
            first_name: 'Soak',
            last_name: 'Donor',
            email: 'soak@example.org',
          }),
        });
        id = ((await response.json()) as { id?: number }).id ?? 0;
        return response.status === 201 || response.status === 200;
      });
      return id;
    })();
    const giftBody = JSON.stringify({
      donor_id: donor,
      amount: 10.25,
      subject: 'Soak gift',
      gift_date: '2026-11-21',
    });

    // The load: 50% new gifts, 15% replays of earlier keys, 35% reads (one gift, a list page,
    // the donor with its giving totals), paced to SOAK_RATE across SOAK_CLIENTS clients.
    let issuedKeys = 0;
    const giftIds: number[] = [];
    const writesAt: number[] = [];
    let requests = 0;
    let errors = 0;
    const statuses: Record<string, number> = {};
    const count = (label: string, status: number) => {
      statuses[`${label} ${status}`] = (statuses[`${label} ${status}`] ?? 0) + 1;
      if (status >= 400 && status !== 409) errors += 1;
    };
    const request = async (): Promise<void> => {
      const roll = Math.random();
      if (roll < 0.5 || issuedKeys === 0) {
        issuedKeys += 1;
        writesAt.push(Date.now());
        const response = await fetch(`${base}/gifts`, {
          method: 'POST',
          headers: { ...headers, 'Idempotency-Key': `soak-${issuedKeys}` },
          body: giftBody,
        });
        const body = (await response.json()) as { id?: number };
        if (response.status === 201 && body.id) giftIds.push(body.id);
        count('POST', response.status);
        return;
      }
      let response: Response;
      let label = 'GET';
      if (roll < 0.65) {
        label = 'replay';
        const key = `soak-${1 + Math.floor(Math.random() * issuedKeys)}`;
        response = await fetch(`${base}/gifts`, {
          method: 'POST',
          headers: { ...headers, 'Idempotency-Key': key },
          body: giftBody,
        });
      } else if (roll < 0.8 && giftIds.length) {
        const id = giftIds[Math.floor(Math.random() * giftIds.length)];
        response = await fetch(`${base}/gifts/${id}`, { headers });
      } else if (roll < 0.9) {
        response = await fetch(`${base}/gifts?limit=20`, { headers });
      } else {
        response = await fetch(`${base}/donors/${donor}`, { headers });
      }
      await response.arrayBuffer();
      count(label, response.status);
    };

    const started = Date.now();
    const endAt = started + seconds * 1000;
    const interval = (clients / rate) * 1000;
    const loops = Array.from({ length: clients }, async () => {
      while (Date.now() < endAt) {
        const begun = Date.now();
        try {
          await request();
        } catch {
          errors += 1;
        }
        requests += 1;
        const wait = interval - (Date.now() - begun);
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      }
    });

    const retention = FINISHED_RETENTION_SECONDS * 1000;
    const samples: Sample[] = [];
    let lastRequests = 0;
    let lastErrors = 0;
    const sample = async () => {
      const at = Date.now();
      samples.push({
        at: Math.round((at - started) / 1000),
        apiRssMb: await rssMb(api.pid),
        workerRssMb: await rssMb(worker.pid),
        redisKeys: await countKeys(redis, prefix),
        pgConnections: Number(
          await pool.oneFirst(sql.unsafe`
            SELECT count(*)::int FROM pg_stat_activity WHERE datname = current_database()`),
        ),
        requests: requests - lastRequests,
        errors: errors - lastErrors,
        retainedJobs: writesAt.filter((time) => time > at - retention).length,
      });
      lastRequests = requests;
      lastErrors = errors;
      const last = samples.at(-1)!;
      process.stderr.write(
        `t=${last.at}s api ${last.apiRssMb} MiB, worker ${last.workerRssMb} MiB, redis keys ${last.redisKeys}, pg ${last.pgConnections}, ${last.requests} requests\n`,
      );
    };
    await sample();
    const sampler = setInterval(() => void sample(), sampleEvery);
    await Promise.all(loops);
    clearInterval(sampler);
    await sample();

    print(samples, {
      statuses,
      writes: issuedKeys,
      pgCeiling: API_POOL + WORKER_CONCURRENCY + 2 + 2,
      stored: Number(
        await pool.oneFirst(
          sql.unsafe`SELECT count(*)::int FROM gifts WHERE institution_id = ${institution.id}`,
        ),
      ),
    });
  } finally {
    await Promise.all(children.map(stop));
    await deleteKeys(redis, prefix);
    redis.disconnect();
    await pool.end();
    await scratch.drop();
  }
}

/** Samples from the warm-up (pools filling, code compiling) say nothing about creeping. */
const warmUpSeconds = Math.min(30, Math.round(seconds / 5));

function flat(series: number[]): { first: number; last: number; ok: boolean } {
  const third = Math.max(1, Math.floor(series.length / 3));
  const first = average(series.slice(0, third));
  const last = average(series.slice(-third));
  return { first, last, ok: last <= first * 1.2 };
}

function print(
  samples: Sample[],
  totals: { statuses: Record<string, number>; writes: number; pgCeiling: number; stored: number },
) {
  console.log(
    `\nSoak: ${seconds} s at ~${rate} requests/s from ${clients} clients, ${new Date().toISOString()}`,
  );
  console.table(
    samples.map((sample) => ({
      s: sample.at,
      'API RSS MiB': sample.apiRssMb,
      'worker RSS MiB': sample.workerRssMb,
      'Redis keys': sample.redisKeys,
      'write jobs in retention': sample.retainedJobs,
      'PG connections': sample.pgConnections,
      requests: sample.requests,
      errors: sample.errors,
    })),
  );
  console.log(`answers: ${JSON.stringify(totals.statuses)}`);
  console.log(`new keys sent: ${totals.writes}; gifts stored: ${totals.stored}`);
  const verdicts: [string, boolean, string][] = [];
  const steady = samples.filter((sample) => sample.at >= warmUpSeconds);
  console.log(`verdicts over the samples after a ${warmUpSeconds} s warm-up:`);
  for (const [label, series] of [
    ['API RSS', steady.map((sample) => sample.apiRssMb)],
    ['worker RSS', steady.map((sample) => sample.workerRssMb)],
  ] as const) {
    const { first, last, ok } = flat(series);
    verdicts.push([
      label,
      ok,
      `last third ${last.toFixed(1)} MiB vs first third ${first.toFixed(1)} MiB (limit +20%)`,
    ]);
  }
  // A keyed write leaves at most two keys for the retention window (common/queue.ts): its
  // completed job, and its key's lease or done marker. Keys follow the writes of the last window;
  // anything beyond that plus the queue's own few keys is a leak.
  const overshoot = Math.max(
    ...samples.map((sample) => sample.redisKeys - 2 * sample.retainedJobs),
  );
  verdicts.push([
    'Redis keys',
    overshoot <= 50,
    `at most ${overshoot} keys beyond a job and a lease or marker per write in its retention window (limit 50)`,
  ]);
  const connections = steady.map((sample) => sample.pgConnections);
  const pg = flat(connections);
  verdicts.push([
    'PG connections',
    Math.max(...connections) <= totals.pgCeiling && pg.ok,
    `max ${Math.max(...connections)} (pool ceiling ${totals.pgCeiling}); last third ${pg.last.toFixed(1)} vs first ${pg.first.toFixed(1)}`,
  ]);
  const failed = samples.reduce((sum, sample) => sum + sample.errors, 0);
  verdicts.push(['errors', failed === 0, `${failed} failed requests`]);
  for (const [label, ok, detail] of verdicts)
    console.log(`${ok ? 'ok    ' : 'NOT OK'}  ${label}: ${detail}`);
  console.log(`verdict: ${verdicts.every(([, ok]) => ok) ? 'stable' : 'NOT stable'}`);
}

await main();
