/**
 * `npm run bench:writes`: the price of the queue. Posts gifts at 50 connections with a unique
 * Idempotency-Key each, through API and worker processes, next to a bare Express + pg insert
 * measured in the same run; then replays the same keys, and repeats with two workers, then with
 * the connections split over two API processes (with two workers, then one). While only the
 * first API process is sent to, a second one runs idle: its CPU per write is printed.
 *
 * Where /proc is readable it also prints the CPU each request cost each process: the HTTP
 * server, the workers, the Postgres backends of the scratch database and the Redis server (when
 * they run on this machine) and the load generator itself.
 *
 * A second baseline is the queue as a tutorial would write it (bench/naiveQueueServer.ts: Express
 * adds a BullMQ job and waits on QueueEvents, a worker inserts with pg, nothing else): the
 * service should beat it while doing auth, validation, idempotency and events.
 *
 * Freshly started API and worker processes get a few seconds of unmeasured load before their
 * first phase (warmUp), so that no build is measured while it still compiles its hot code.
 *
 * Environment: DATABASE_URL (a server where a scratch database may be created), REDIS_URL,
 * BENCH_SECONDS (per phase, default 15), BENCH_CONNECTIONS (default 50), BENCH_BEFORE_DIST (the
 * `dist` folder of an earlier build: its API and worker are measured too, in a phase of their
 * own right after this build's, for before/after figures from one run).
 */
import autocannon from 'autocannon';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { createDatabasePool } from '../common/db/pool.js';
import { createInstitution } from '../common/institutions.js';
import { createRedis, deleteMatching } from '../common/redis.js';
import { cpuPerRequest, cpuSecondsOf, readCpu } from './cpuTime.js';
import { freePort, spawnProcess, stop, until } from './processes.js';
import { createScratchDatabase } from './scratch.js';
import { z } from 'zod';

const seconds = Number(process.env.BENCH_SECONDS ?? 15);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
const databaseBase = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const beforeDist = process.env.BENCH_BEFORE_DIST;
/** Unmeasured load on freshly started processes before their first phase. */
const WARM_UP_SECONDS = 3;

interface Row {
  phase: string;
  requests: number;
  perSecond: number;
  p50: number;
  p99: number;
  errors: number;
  /** CPU milliseconds per request by process group, where /proc can tell. */
  cpu: Record<string, number> | null;
}

/** The processes of the phase, by group, at the moment of asking. */
type ProcessGroups = () => Promise<Record<string, number[]>>;

/**
 * One phase: the connections split evenly over `urls` (one per API process, as a balancer
 * would), all sending at once. Rates add up; the latencies shown are the worst target's.
 */
async function load(
  phase: string,
  urls: string[],
  headers: Record<string, string>,
  body: string,
  nextKey: (() => string) | null,
  processes: ProcessGroups,
): Promise<Row> {
  const before = await readCpu(await processes());
  const results = await Promise.all(
    urls.map((url) =>
      autocannon({
        url,
        connections: Math.ceil(connections / urls.length),
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
      }),
    ),
  );
  const after = await readCpu(await processes());
  const sum = (of: (result: autocannon.Result) => number) =>
    results.reduce((total, result) => total + of(result), 0);
  const requests = sum((result) => result.requests.total);
  return {
    phase,
    requests,
    perSecond: sum((result) => result.requests.average),
    p50: Math.max(...results.map((result) => result.latency.p50)),
    p99: Math.max(...results.map((result) => result.latency.p99)),
    errors: sum((result) => result.errors + result.timeouts + result.non2xx),
    cpu: before && after ? cpuPerRequest(before, after, requests) : null,
  };
}

const isLocal = (url: string) =>
  ['127.0.0.1', 'localhost', '[::1]'].includes(new URL(url).hostname);

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
      // One key at full speed: measured with the limiter running, at a ceiling it never reaches.
      RATE_LIMIT_PER_SECOND: '1000000',
    };

    // Postgres backends and the Redis server count only when they run on this machine.
    const postgresPids = async () =>
      isLocal(scratch.url)
        ? (
            await pool.anyFirst(sql.type(z.object({ pid: z.number() }))`
              SELECT pid FROM pg_stat_activity
              WHERE datname = current_database() AND pid <> pg_backend_pid()`)
          ).map(Number)
        : [];
    const redisInfo = createRedis(redisUrl, 'blocking');
    const redisPid = isLocal(redisUrl)
      ? Number(/process_id:(\d+)/.exec(await redisInfo.info('server'))?.[1] ?? 0)
      : 0;
    redisInfo.disconnect();
    const groups =
      (
        server: () => number[],
        workers: () => number[],
        idle: () => number[] = () => [],
      ): ProcessGroups =>
      async () => ({
        'HTTP server': server(),
        'idle API': idle(),
        workers: workers(),
        Postgres: await postgresPids(),
        Redis: redisPid ? [redisPid] : [],
        'load generator': [process.pid],
      });
    const pidsOf = (list: ChildProcess[]) => list.map((child) => child.pid ?? 0);

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
    rows.push(
      await load(
        'baseline: express + pg insert',
        [baseUrl],
        {},
        body,
        null,
        groups(
          () => pidsOf([baseline]),
          () => [],
        ),
      ),
    );
    await stop(baseline);

    const naivePort = await freePort();
    const naiveEnv = {
      ...env,
      PORT: String(naivePort),
      QUEUE_PREFIX: `${prefix}-naive`,
      BENCH_INSTITUTION_ID: String(institution.id),
    };
    const naive = [
      spawnProcess('bench/naiveQueueServer.js', { ...naiveEnv, BENCH_ROLE: 'api' }),
      spawnProcess('bench/naiveQueueServer.js', { ...naiveEnv, BENCH_ROLE: 'worker' }),
    ];
    children.push(...naive);
    const naiveUrl = `http://127.0.0.1:${naivePort}/gifts`;
    await until('the naive queue server', () => post(naiveUrl, {}));
    rows.push(
      await load(
        'naive: express + BullMQ + worker + pg',
        [naiveUrl],
        {},
        body,
        null,
        groups(
          () => pidsOf(naive.slice(0, 1)),
          () => pidsOf(naive.slice(1)),
        ),
      ),
    );
    await Promise.all(naive.map(stop));

    // Two API processes from the start: the second stays idle (its CPU is what an API process
    // pays for the writes of others) until the phases that send to both.
    const apiPorts = [await freePort(), await freePort()];
    const apis = apiPorts.map((port) =>
      spawnProcess('api/main.js', { ...env, PORT: String(port) }),
    );
    const workers = [spawnProcess('worker/main.js', env)];
    children.push(...apis, ...workers);
    const oneApi = groups(
      () => pidsOf(apis.slice(0, 1)),
      () => pidsOf(workers),
      () => pidsOf(apis.slice(1)),
    );
    const twoApis = groups(
      () => pidsOf(apis),
      () => pidsOf(workers),
    );
    const urls = apiPorts.map((port) => `http://127.0.0.1:${port}/api/v1/gifts`);
    const auth = { 'X-Service-API-Key': apiKey.key };
    await until('the APIs and a worker', async () =>
      (await Promise.all(urls.map((url) => post(url, auth)))).every(Boolean),
    );
    const first = urls.slice(0, 1);
    // What an API process spends with no writes at all (its timers), to set against what the
    // idle one spends while the other takes writes.
    const quiet = await idleCpuPerSecond(apis[1]!.pid ?? 0, seconds);

    let issued = 0;
    const fresh = () => `bench-${issued++}`;
    await warmUp(first, auth, body, fresh);
    rows.push(await load('1 API process, 1 worker', first, auth, body, fresh, oneApi));
    const firstRun = issued;
    let replayed = 0;
    rows.push(
      await load(
        'replays of those keys',
        first,
        auth,
        body,
        () => `bench-${replayed++ % firstRun}`,
        oneApi,
      ),
    );

    workers.push(spawnProcess('worker/main.js', env));
    children.push(workers[1]!);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    rows.push(await load('1 API process, 2 workers', first, auth, body, fresh, oneApi));
    rows.push(await load('2 API processes, 2 workers', urls, auth, body, fresh, twoApis));
    await stop(workers.pop()!);
    rows.push(await load('2 API processes, 1 worker', urls, auth, body, fresh, twoApis));

    if (beforeDist) {
      // The earlier build on the same database and queues, then this build again, one API process
      // and one worker each: before and after side by side, on the same (loaded) machine.
      await Promise.all([...apis, ...workers].map(stop));
      const pair = (root?: string) => {
        const port = apiPorts[0]!;
        const entry = (name: string) => (root ? path.join(root, name) : name);
        const started = [
          spawnProcess(entry('api/main.js'), { ...env, PORT: String(port) }),
          spawnProcess(entry('worker/main.js'), env),
        ];
        children.push(...started);
        return started;
      };
      for (const [name, root] of [
        ['before: 1 API process, 1 worker', beforeDist],
        ['after: 1 API process, 1 worker', undefined],
      ] as const) {
        const [api, worker] = pair(root);
        await until(name, () => post(first[0]!, auth));
        await warmUp(first, auth, body, fresh);
        rows.push(
          await load(
            name,
            first,
            auth,
            body,
            fresh,
            groups(
              () => pidsOf([api!]),
              () => pidsOf([worker!]),
            ),
          ),
        );
        await Promise.all([api!, worker!].map(stop));
      }
    }

    const stored = Number(await pool.oneFirst(sql.unsafe`SELECT count(*) FROM gifts`));
    const keyed = Number(
      await pool.oneFirst(sql.unsafe`SELECT count(*) FROM write_receipts WHERE source = 'client'`),
    );
    print(rows, stored, keyed, quiet);
  } finally {
    await Promise.all(children.filter((child) => child.exitCode === null).map(stop));
    await pool.end();
    await scratch.drop();
    // The service's keys and the naive queue's (`<prefix>-naive`), by SCAN: a run can leave more
    // keys than one DEL can take as arguments.
    const redis = createRedis(redisUrl, 'blocking');
    await deleteMatching(redis, `${prefix}*`);
    redis.disconnect();
  }
}

/**
 * A short unmeasured load on freshly started processes: without it the first phase of a build
 * also pays for compiling its hot code and opening its connections, and reads slower than a
 * build measured after another phase.
 */
async function warmUp(
  urls: string[],
  headers: Record<string, string>,
  body: string,
  nextKey: () => string,
) {
  await Promise.all(
    urls.map((url) =>
      autocannon({
        url,
        connections: Math.ceil(connections / urls.length),
        duration: WARM_UP_SECONDS,
        method: 'POST',
        headers: { 'Content-Type': 'application/json', ...headers },
        body,
        requests: [
          {
            setupRequest: (request: autocannon.Request) => ({
              ...request,
              headers: { ...request.headers, 'Idempotency-Key': nextKey() },
            }),
          },
        ],
      }),
    ),
  );
}

/** CPU milliseconds per second a process spends over `seconds` of nothing sent to anyone. */
async function idleCpuPerSecond(pid: number, seconds: number): Promise<number | null> {
  const before = await cpuSecondsOf(pid);
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  const after = await cpuSecondsOf(pid);
  return before === null || after === null ? null : ((after - before) * 1000) / seconds;
}

function print(rows: Row[], stored: number, keyed: number, quiet: number | null) {
  const row = (phase: string) => rows.find((candidate) => candidate.phase === phase)!;
  const baseline = rows[0]!.perSecond;
  const naive = rows[1]!.perSecond;
  const table = rows.map((row) => ({
    phase: row.phase,
    'writes/s': Math.round(row.perSecond),
    'vs baseline': `${(row.perSecond / baseline).toFixed(2)}x`,
    'vs naive queue': `${(row.perSecond / naive).toFixed(2)}x`,
    'p50 ms': row.p50,
    'p99 ms': row.p99,
    requests: row.requests,
    errors: row.errors,
  }));
  console.log(
    `\nWrite benchmark: ${connections} connections, ${seconds} s per phase, ${new Date().toISOString()}`,
  );
  console.table(table);
  if (rows.every((row) => row.cpu)) {
    console.log('CPU milliseconds per request, by process (from /proc):');
    console.table(
      rows.map((row) => {
        const cpu = row.cpu!;
        const total = Object.values(cpu).reduce((sum, value) => sum + value, 0);
        return {
          phase: row.phase,
          ...Object.fromEntries(Object.entries(cpu).map(([name, ms]) => [name, ms.toFixed(2)])),
          total: total.toFixed(2),
        };
      }),
    );
  }
  console.log(
    `gifts stored by the full path and baselines: ${stored}; idempotency receipts: ${keyed}`,
  );
  const full = row('1 API process, 1 worker');
  const idle = full.cpu?.['idle API'];
  if (idle !== undefined && quiet !== null) {
    // /proc counts in 10 ms ticks: over a short phase these are a few ticks, so read them as
    // bounds, not exact figures.
    const busy = idle * full.perSecond;
    console.log(
      `idle API process: ${idle.toFixed(4)} ms CPU per write made through the other ` +
        `(target <= 0.01); ${busy.toFixed(1)} ms CPU per second while the other took writes, ` +
        `${quiet.toFixed(1)} ms per second with no writes anywhere: ` +
        `${(Math.max(0, busy - quiet) / full.perSecond).toFixed(4)} ms per write beyond its own timers`,
    );
  }
  const met = (ratio: number, goal: number) =>
    ratio >= goal && full.errors === 0 ? 'met' : 'NOT met';
  console.log(
    `goals (1 API process, 1 worker, zero errors): >= 0.5x baseline: ` +
      `${met(full.perSecond / baseline, 0.5)}; >= 1.0x naive queue: ${met(full.perSecond / naive, 1)}; ` +
      `replays faster than first writes: ${row('replays of those keys').perSecond > full.perSecond ? 'yes' : 'no'}`,
  );
}

await main();
