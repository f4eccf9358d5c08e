/**
 * `npm run bench:lists`: what does GET /api/v1/gifts cost next to a bare Express server running
 * the same SQL, and does a keyset page deep in a million gifts cost what the first page costs?
 * Builds a scratch database on DATABASE_URL's server, seeds one institution, starts the real API
 * and the baseline (bench/listBaselineServer.ts: Express answering GET /gifts with the first
 * page's `select … limit 26` as JSON, nothing else) as processes of their own, and measures them
 * with autocannon in alternating rounds; then the same SQL straight through pg. Prints req/s,
 * latency, bytes per response (so that a change in what a page carries shows), the CPU each
 * server process spent per request and the ratios. Drops the database
 * (and its Redis keys) at the end.
 *
 * Settings (environment): BENCH_GIFTS (1000000), BENCH_DONORS (gifts / 20), BENCH_FUNDS (25),
 * BENCH_DEPTH (90% of the gifts), BENCH_DURATION seconds per measurement (5), BENCH_ROUNDS of
 * the HTTP measurements (2), BENCH_WARMUP seconds (2), BENCH_CONNECTIONS (10),
 * BENCH_NEIGHBOUR_GIFTS (0: gifts of a second institution, seeded after the first, newer than
 * all of its gifts), BENCH_LOG_LEVEL of the API (warn), BENCH_CPU_PROF (a directory: the API and
 * the baseline write V8 CPU profiles there), BENCH_API_NODE_OPTIONS (Node flags for the API),
 * BENCH_COMPARE_DIST (another build's dist/, whose API is measured beside this one). Exit status
 * 1 when the API's first page makes less than 0.8x the baseline's req/s, when the deep page costs
 * more than 1.3x the first, when a page query does not read gifts_pkey backward (or sorts, or
 * scans the table), or when a request fails.
 */
import autocannon from 'autocannon';
import { randomBytes } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { sql, type FragmentSqlToken, type QuerySqlToken } from 'slonik';
import { migrateUp } from '../common/db/migrate.js';
import { createDatabasePool } from '../common/db/pool.js';
import { createInstitution } from '../common/institutions.js';
import { encodeCursor } from '../common/pagination/cursor.js';
import { pageStatement } from '../common/pagination/listPage.js';
import { DEFAULT_LIMIT } from '../common/pagination/listRequest.js';
import { createRedis } from '../common/redis.js';
import { giftList } from '../common/resources/gifts/list.js';
import { seedInstitution } from '../common/seed/seedInstitution.js';
import { cpuSecondsOf } from './cpuTime.js';
import { checkKeysetPlan, describePlan, explain, type KeysetVerdict } from './plans.js';
import { freePort, spawnProcess, stop, until } from './processes.js';
import { runSqlLoad, type LoadResult, type SqlStep } from './sqlLoad.js';

const MAX_RATIO = 1.3;
/** The API's first page against a bare Express + pg answering the same SQL (req/s). */
const MIN_VS_BARE = 0.8;
const log = (message: string) => process.stderr.write(`bench: ${message}\n`);

function intSetting(name: string, fallback: number, minimum = 1): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(value) || value < minimum) {
    process.stderr.write(`bench: ${name} must be an integer of at least ${minimum}\n`);
    process.exit(2);
  }
  return value;
}

const gifts = intSetting('BENCH_GIFTS', 1_000_000, DEFAULT_LIMIT * 4);
const settings = {
  gifts,
  donors: intSetting('BENCH_DONORS', Math.max(1, Math.round(gifts / 20))),
  funds: intSetting('BENCH_FUNDS', 25),
  depth: Math.min(intSetting('BENCH_DEPTH', Math.floor(gifts * 0.9)), gifts - DEFAULT_LIMIT),
  duration: intSetting('BENCH_DURATION', 5),
  warmup: intSetting('BENCH_WARMUP', 2, 0),
  connections: intSetting('BENCH_CONNECTIONS', 10),
  neighbourGifts: intSetting('BENCH_NEIGHBOUR_GIFTS', 0, 0),
  rounds: intSetting('BENCH_ROUNDS', 2),
  /** Where the API and baseline processes write V8 CPU profiles (`--cpu-prof`) when they stop. */
  cpuProfileDir: process.env.BENCH_CPU_PROF || null,
  /** Another build's dist/ (e.g. the main branch's), whose API is measured beside this one. */
  compareDist: process.env.BENCH_COMPARE_DIST || null,
};
const baseUrl = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const redisUrl = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
const runId = randomBytes(4).toString('hex');
const databaseName = `dgs_bench_${runId}`;
const queuePrefix = `dgs-bench-${runId}`;

function databaseUrl(database: string): string {
  const url = new URL(baseUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

async function admin(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: baseUrl });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

/** Undo steps, last first; run at the end, on failure and on Ctrl-C. */
const cleanups: Array<() => Promise<unknown>> = [];
async function cleanUp(): Promise<void> {
  for (let step = cleanups.pop(); step; step = cleanups.pop()) {
    try {
      await step();
    } catch (error) {
      log(`clean-up step failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
}
process.once('SIGINT', () => {
  log('interrupted; cleaning up');
  void cleanUp().finally(() => process.exit(130));
});

/** Slonik writes placeholders as $slonik_N; pg wants $N. */
const toStep = (query: QuerySqlToken): SqlStep => ({
  text: query.sql.replace(/\$slonik_(\d+)/g, '$$$1'),
  values: query.values,
});

/** The page query listPage (common/pagination/listPage.ts) runs: newest first, limit + 1. */
function pageQuery(institutionId: number, conditions: FragmentSqlToken[] = []): SqlStep {
  const where = sql.join(
    [
      sql.fragment`${giftList.institutionColumn} = ${institutionId}`,
      ...(giftList.where ? [giftList.where] : []),
      ...conditions,
    ],
    sql.fragment` AND `,
  );
  return toStep(sql.unsafe`
    SELECT ${giftList.columns} FROM ${giftList.from}
    WHERE ${where}
    ORDER BY ${giftList.key} DESC
    LIMIT ${DEFAULT_LIMIT + 1}`);
}

interface HttpTotals {
  label: string;
  url: string;
  pid: number | undefined;
  requests: number;
  seconds: number;
  cpuSeconds: number;
  results: LoadResult[];
}

/** Rounds of one measurement as one: rates over the whole time, the worst round's latencies. */
function combine(results: LoadResult[]): LoadResult {
  const requests = results.reduce((sum, item) => sum + item.requests, 0);
  const seconds = results.reduce((sum, item) => sum + item.requests / item.requestsPerSecond, 0);
  return {
    requests,
    requestsPerSecond: requests / seconds,
    p50: Math.max(...results.map((item) => item.p50)),
    p99: Math.max(...results.map((item) => item.p99)),
    mean: results.reduce((sum, item) => sum + item.mean * item.requests, 0) / requests,
    errors: results.reduce((sum, item) => sum + item.errors, 0),
    bytes: results.every((item) => item.bytes !== undefined)
      ? results.reduce((sum, item) => sum + item.bytes! * item.requests, 0) / requests
      : undefined,
  };
}

async function httpLoad(url: string, apiKey: string, seconds: number): Promise<LoadResult> {
  const result = await autocannon({
    url,
    connections: settings.connections,
    duration: seconds,
    headers: { 'X-Service-API-Key': apiKey },
  });
  return {
    requests: result.requests.total,
    requestsPerSecond: result.requests.total / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    mean: result.latency.average,
    errors: result.errors + result.non2xx,
    bytes: result.throughput.total / Math.max(1, result.requests.total),
  };
}

const format = (value: number, digits = 2) =>
  Number.isFinite(value) ? value.toFixed(digits) : 'n/a';
const pad = (text: string, width: number) => text.padStart(width);

function table(rows: Array<[string, LoadResult]>): string {
  const header = `${'measurement'.padEnd(34)}${pad('req/s', 10)}${pad('p50 ms', 10)}${pad('p99 ms', 10)}${pad('errors', 8)}${pad('bytes', 8)}`;
  const lines = rows.map(
    ([label, result]) =>
      `${label.padEnd(34)}${pad(format(result.requestsPerSecond, 1), 10)}${pad(format(result.p50), 10)}${pad(format(result.p99), 10)}${pad(String(result.errors), 8)}${pad(result.bytes === undefined ? '' : format(result.bytes, 0), 8)}`,
  );
  return [header, '-'.repeat(header.length), ...lines].join('\n');
}

async function main(): Promise<number> {
  const url = databaseUrl(databaseName);
  log(`scratch database ${databaseName} on ${new URL(baseUrl).host}, Redis prefix ${queuePrefix}`);
  await admin(`CREATE DATABASE ${databaseName}`);
  cleanups.push(() => admin(`DROP DATABASE IF EXISTS ${databaseName} WITH (FORCE)`));
  await migrateUp(url);

  const db = await createDatabasePool(url, { maxPoolSize: 4, applicationName: 'dgs-bench' });
  cleanups.push(() => db.end());
  const { institution, apiKey } = await createInstitution(db, 'Bench University', 'USD');

  log(
    `seeding ${settings.gifts} gifts, ${settings.donors} donors, ${settings.funds} funds (institution ${institution.id})`,
  );
  let started = performance.now();
  await seedInstitution(db, {
    institutionId: institution.id,
    donors: settings.donors,
    gifts: settings.gifts,
    funds: settings.funds,
  });
  const seedSeconds = (performance.now() - started) / 1000;
  log(`seeded in ${format(seedSeconds, 1)} s`);
  if (settings.neighbourGifts > 0) {
    const neighbour = await createInstitution(db, 'Neighbour College', 'USD');
    started = performance.now();
    await seedInstitution(db, {
      institutionId: neighbour.institution.id,
      donors: Math.max(1, Math.round(settings.neighbourGifts / 20)),
      gifts: settings.neighbourGifts,
      funds: 5,
    });
    log(
      `seeded ${settings.neighbourGifts} neighbour gifts in ${format((performance.now() - started) / 1000, 1)} s`,
    );
  }

  // A database in its steady state: the bulk load's hint bits and visibility map are set now,
  // rather than by autovacuum (or by the first reads) during whichever round comes first.
  started = performance.now();
  await db.query(sql.unsafe`VACUUM (ANALYZE) gifts, donors, funds`);
  log(`vacuumed in ${format((performance.now() - started) / 1000, 1)} s`);

  const cursorSecret = randomBytes(32).toString('hex');
  const poolSize = String(Math.max(10, settings.connections));
  const redis = createRedis(redisUrl, 'request');
  cleanups.push(async () => {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${queuePrefix}:*`, 'COUNT', 1000);
      if (keys.length) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
    redis.disconnect();
  });
  // The API and the baseline each run as a process of their own, as they would in production,
  // so that neither shares an event loop with the load generator.
  const profileOptions = settings.cpuProfileDir
    ? ['--cpu-prof', `--cpu-prof-dir=${settings.cpuProfileDir}`]
    : [];
  const apiNodeOptions = (process.env.BENCH_API_NODE_OPTIONS ?? '').split(' ').filter(Boolean);
  const apiPort = await freePort();
  const apiEnv = {
    PORT: String(apiPort),
    DATABASE_URL: url,
    REDIS_URL: redisUrl,
    CURSOR_SECRET: cursorSecret,
    QUEUE_PREFIX: queuePrefix,
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL || 'warn',
    DATABASE_POOL_SIZE: poolSize,
    // One key at full speed: measured with the limiter running, at a ceiling it never reaches.
    RATE_LIMIT_PER_SECOND: '1000000',
  };
  const apiProcess = spawnProcess('api/main.js', apiEnv, [...apiNodeOptions, ...profileOptions]);
  cleanups.push(() => stop(apiProcess));
  const api = { url: `http://127.0.0.1:${apiPort}` };
  await until('the API', async () => (await fetch(`${api.url}/health`)).ok);
  // Another build's API (BENCH_COMPARE_DIST), on the same database, measured in the same rounds.
  let compare: { url: string; pid: number | undefined } | null = null;
  if (settings.compareDist) {
    const port = await freePort();
    const child = spawnProcess(path.resolve(settings.compareDist, 'api/main.js'), {
      ...apiEnv,
      PORT: String(port),
    });
    cleanups.push(() => stop(child));
    compare = { url: `http://127.0.0.1:${port}`, pid: child.pid };
    await until('the API to compare with', async () => (await fetch(`${compare!.url}/health`)).ok);
  }

  // The deep position: the id of the row `depth` rows below the newest, as a real cursor.
  const sqlPool = new pg.Pool({ connectionString: url, max: settings.connections });
  cleanups.push(() => sqlPool.end());
  const deepKey = Number(
    (
      await sqlPool.query<{ id: string }>(
        'SELECT id FROM gifts WHERE institution_id = $1 ORDER BY id DESC OFFSET $2 LIMIT 1',
        [institution.id, settings.depth - 1],
      )
    ).rows[0]!.id,
  );
  const cursor = encodeCursor(cursorSecret, {
    i: institution.id,
    e: giftList.endpoint,
    f: {},
    k: deepKey,
    d: 'after',
    x: Math.floor(Date.now() / 1000) + 3600,
  });
  const firstUrl = `${api.url}/api/v1/gifts?limit=${DEFAULT_LIMIT}`;
  const deepUrl = `${api.url}/api/v1/gifts?limit=${DEFAULT_LIMIT}&starting_after=${encodeURIComponent(cursor)}`;

  const firstSql = pageQuery(institution.id);
  const deepSql = pageQuery(institution.id, [sql.fragment`${giftList.key} < ${deepKey}`]);

  // The API must answer what the SQL says, or the comparison means nothing.
  const expectedDeep = (await sqlPool.query<{ id: string }>(deepSql.text, [...deepSql.values])).rows
    .slice(0, DEFAULT_LIMIT)
    .map((row) => Number(row.id));
  for (const [label, pageUrl, expected] of [
    ['first', firstUrl, null],
    ['deep', deepUrl, expectedDeep],
  ] as const) {
    const response = await fetch(pageUrl, { headers: { 'X-Service-API-Key': apiKey.key } });
    const body = (await response.json()) as { data?: Array<{ id: number }> };
    const ids = body.data?.map((row) => row.id) ?? [];
    if (response.status !== 200 || ids.length !== DEFAULT_LIMIT) {
      throw new Error(`the ${label} page answered ${response.status} with ${ids.length} rows`);
    }
    if (expected && ids.join() !== expected.join()) {
      throw new Error(`the ${label} page differs from the SQL page`);
    }
  }
  // What the API runs besides the page on a cursor request: does a previous page exist? Asked
  // in the page's statement as one ordered row (listPage), which keeps it on the index.
  const orderedProbe = toStep(sql.unsafe`
    SELECT 1 FROM ${giftList.from} WHERE ${giftList.institutionColumn} = ${institution.id}
      AND ${giftList.key} > ${expectedDeep[0]!} ORDER BY ${giftList.key} LIMIT 1`);

  // The baseline: Express answering GET /gifts with the first page's SQL, nothing else.
  const barePort = await freePort();
  const bareProcess = spawnProcess(
    'bench/listBaselineServer.js',
    {
      PORT: String(barePort),
      DATABASE_URL: url,
      BENCH_POOL_SIZE: poolSize,
      BENCH_PAGE_SQL: firstSql.text,
      BENCH_PAGE_VALUES: JSON.stringify(firstSql.values),
    },
    profileOptions,
  );
  cleanups.push(() => stop(bareProcess));
  const bareUrl = `http://127.0.0.1:${barePort}/gifts`;
  await until('the baseline server', async () => (await fetch(bareUrl)).ok);
  const bareRows = (await (await fetch(bareUrl)).json()) as unknown[];
  if (bareRows.length !== DEFAULT_LIMIT + 1) {
    throw new Error(`the baseline answered ${bareRows.length} rows`);
  }

  // Plans of the two page queries, then of the filters of GET /gifts (first pages).
  const verdicts: Array<[string, KeysetVerdict, string]> = [];
  for (const [label, step, positioned] of [
    ['first page', firstSql, false],
    ['deep page', deepSql, true],
  ] as const) {
    const plan = await explain(sqlPool, step);
    verdicts.push([label, checkKeysetPlan(plan, 'gifts_pkey', positioned), describePlan(plan)]);
  }
  const filterPlans = await explainFilters(sqlPool, institution.id);

  // HTTP: the baseline, the API's first page and its deep page, one after the other, in rounds,
  // so that a change in what else the machine runs touches all three alike. Each also gets the
  // CPU its server process spent per request, which other load on the machine disturbs less.
  const http: HttpTotals[] = [
    { label: 'bare Express + pg, first page', url: bareUrl, pid: bareProcess.pid },
    { label: 'API first page', url: firstUrl, pid: apiProcess.pid },
    { label: `API deep page (row ${settings.depth})`, url: deepUrl, pid: apiProcess.pid },
    ...(compare
      ? [
          {
            label: 'compared build: first page',
            url: firstUrl.replace(api.url, compare.url),
            pid: compare.pid,
          },
        ]
      : []),
  ].map((target) => ({ ...target, requests: 0, seconds: 0, cpuSeconds: 0, results: [] }));
  for (let round = 1; round <= settings.rounds; round += 1) {
    for (const target of http) {
      if (settings.warmup > 0) await httpLoad(target.url, apiKey.key, settings.warmup);
      log(
        `round ${round}/${settings.rounds}: ${target.label} for ${settings.duration} s at ${settings.connections} connections`,
      );
      const cpuBefore = target.pid ? await cpuSecondsOf(target.pid) : null;
      const result = await httpLoad(target.url, apiKey.key, settings.duration);
      const cpuAfter = target.pid ? await cpuSecondsOf(target.pid) : null;
      log(`  ${format(result.requestsPerSecond, 1)} req/s, p50 ${format(result.p50)} ms`);
      target.results.push(result);
      target.requests += result.requests;
      target.seconds += result.requests / result.requestsPerSecond;
      target.cpuSeconds += cpuBefore !== null && cpuAfter !== null ? cpuAfter - cpuBefore : NaN;
    }
  }
  const measurements: Array<[string, LoadResult]> = http.map((target) => [
    target.label,
    combine(target.results),
  ]);
  const sqlMeasurements: Array<[string, LoadResult]> = [];
  const measureSql = async (label: string, steps: SqlStep[]) => {
    const run = (seconds: number) =>
      runSqlLoad(sqlPool, steps, { connections: settings.connections, durationSeconds: seconds });
    if (settings.warmup > 0) await run(settings.warmup);
    log(`measuring ${label} for ${settings.duration} s at ${settings.connections} connections`);
    sqlMeasurements.push([label, await run(settings.duration)]);
  };
  await measureSql('SQL first page', [firstSql]);
  await measureSql(`SQL deep page (row ${settings.depth})`, [deepSql]);
  await measureSql('SQL deep page + ordered probe', [deepSql, orderedProbe]);

  const rate = (rows: Array<[string, LoadResult]>, index: number) =>
    rows[index]![1].requestsPerSecond;
  const cpuMs = (target: HttpTotals) => (target.cpuSeconds * 1000) / target.requests;
  // Cost of a request at fixed concurrency: the inverse of its throughput.
  const apiVsBare = rate(measurements, 1) / rate(measurements, 0);
  const httpRatio = rate(measurements, 1) / rate(measurements, 2);
  const sqlRatio = rate(sqlMeasurements, 0) / rate(sqlMeasurements, 1);
  const probeRatio = rate(sqlMeasurements, 0) / rate(sqlMeasurements, 2);
  const errors = [...measurements, ...sqlMeasurements].reduce(
    (sum, [, item]) => sum + item.errors,
    0,
  );
  const holds = httpRatio <= MAX_RATIO && sqlRatio <= MAX_RATIO;
  const fastEnough = apiVsBare >= MIN_VS_BARE;
  const plansOk = verdicts.every(([, verdict]) => verdict.ok);
  const [load1, load5] = loadavg();

  const out: string[] = [
    '',
    `gifts list, ${settings.gifts} gifts in the institution${settings.neighbourGifts ? ` (+${settings.neighbourGifts} of a neighbour)` : ''}, ` +
      `limit ${DEFAULT_LIMIT}, ${settings.connections} connections, ${settings.rounds} x ${settings.duration} s each over HTTP, ${settings.duration} s in SQL` +
      ` (seeded in ${format(seedSeconds, 1)} s; load average ${format(load1!)} / ${format(load5!)} at the end, on ${cpus().length} CPUs)`,
    '',
    table(measurements),
    '',
    'server CPU per request (ms): ' +
      http.map((target) => `${target.label} ${format(cpuMs(target), 3)}`).join(', '),
    ...(compare
      ? [
          `compared build (${settings.compareDist}) first page vs bare: ${format(rate(measurements, 3) / rate(measurements, 0))}x`,
        ]
      : []),
    `API first page vs bare Express + pg (req/s): ${format(apiVsBare)}x ` +
      `(CPU per request: bare/API ${format(cpuMs(http[0]!) / cpuMs(http[1]!))}x); ` +
      `at least ${MIN_VS_BARE}x: ${fastEnough ? 'HOLDS' : 'DOES NOT HOLD'}`,
    '',
    table(sqlMeasurements),
    '',
    `deep/first cost (first req/s / deep req/s): HTTP ${format(httpRatio)}x, SQL ${format(sqlRatio)}x` +
      `   (p50 deep/first: HTTP ${format(measurements[2]![1].p50 / measurements[1]![1].p50)}x, SQL ${format(sqlMeasurements[1]![1].p50 / sqlMeasurements[0]![1].p50)}x)`,
    `deep/first CPU the API process spends per request: ${format(cpuMs(http[2]!) / cpuMs(http[1]!))}x`,
    `the API's SQL for a deep page (page + previous-page probe) vs the first page: ${format(probeRatio)}x`,
    `deep page costs at most ${MAX_RATIO}x the first: ${holds ? 'HOLDS' : 'DOES NOT HOLD'}`,
    '',
    `both page queries read gifts_pkey backward, no sort, no seq scan: ${plansOk ? 'YES' : 'NO'}`,
    'plans (EXPLAIN):',
    ...verdicts.flatMap(([label, verdict, summary]) => [
      `  ${label.padEnd(12)} ${verdict.ok ? 'ok  ' : 'BAD '} ${summary}`,
      ...verdict.problems.map((problem) => `               problem: ${problem}`),
    ]),
    '',
    'filters of GET /gifts, first page (EXPLAIN ANALYZE):',
    ...filterPlans,
  ];
  if (errors > 0) out.push('', `${errors} requests failed`);
  process.stdout.write(`${out.join('\n')}\n`);
  return holds && fastEnough && plansOk && errors === 0 ? 0 : 1;
}

/** One line per filter: execution time and the plan, for values that are common and rare. */
async function explainFilters(pool: pg.Pool, institutionId: number): Promise<string[]> {
  const one = async (text: string) =>
    (await pool.query<{ value: string | null }>(text, [institutionId])).rows[0]?.value ?? null;
  const topDonor = await one(
    'SELECT donor_id::text AS value FROM gifts WHERE institution_id = $1 GROUP BY donor_id ORDER BY count(*) DESC LIMIT 1',
  );
  const quietDonor = await one(
    'SELECT donor_id::text AS value FROM gifts WHERE institution_id = $1 GROUP BY donor_id ORDER BY count(*), donor_id LIMIT 1',
  );
  const fund = await one(
    'SELECT fund_id::text AS value FROM gifts, unnest(fund_ids) AS fund_id WHERE institution_id = $1 GROUP BY fund_id ORDER BY count(*) LIMIT 1',
  );
  const threeYearsAgo = new Date();
  threeYearsAgo.setUTCFullYear(threeYearsAgo.getUTCFullYear() - 3);
  const month = threeYearsAgo.toISOString().slice(0, 7);
  const day = threeYearsAgo.toISOString().slice(0, 10);
  const monthAgo = new Date();
  monthAgo.setUTCMonth(monthAgo.getUTCMonth() - 1);
  const lastMonth = monthAgo.toISOString().slice(0, 7);
  // The API's own statement for each filter (pageStatement), so that what is explained is what a
  // first page of GET /gifts with that query runs.
  const cases: Array<[string, Record<string, string>]> = [
    ['none', {}],
    [`donor_id (most gifts)`, topDonor ? { donor_id: topDonor } : {}],
    [`donor_id (one gift)`, quietDonor ? { donor_id: quietDonor } : {}],
    [`fund_id`, fund ? { fund_id: fund } : {}],
    ['type=credit_card', { type: 'credit_card' }],
    ['type=other (rare)', { type: 'other' }],
    ['tribute_acknowledgement=pending', { tribute_acknowledgement: 'pending' }],
    [
      `gift_date ${month}-01..${month}-28`,
      { gift_date_from: `${month}-01`, gift_date_to: `${month}-28` },
    ],
    [`gift_date = ${day}`, { gift_date_from: day, gift_date_to: day }],
    [`gift_date_to ${day}`, { gift_date_to: day }],
    [
      `gift_date ${lastMonth}-01..${lastMonth}-28`,
      { gift_date_from: `${lastMonth}-01`, gift_date_to: `${lastMonth}-28` },
    ],
    [`gift_date_from ${lastMonth}-01`, { gift_date_from: `${lastMonth}-01` }],
    [`gift_date_to ${lastMonth}-28`, { gift_date_to: `${lastMonth}-28` }],
    ['q=tribute', { q: 'tribute' }],
    ['q=zebra (no match)', { q: 'zebra' }],
    ['donor_id + type=check', topDonor ? { donor_id: topDonor, type: 'check' } : {}],
  ];
  const lines: string[] = [];
  for (const [label, filters] of cases) {
    const request = { filters, limit: DEFAULT_LIMIT, direction: 'after' as const, position: null };
    const plan = await explain(pool, toStep(pageStatement(giftList, request, institutionId)), true);
    lines.push(
      `  ${label.padEnd(34)}${pad(format(plan.executionTime ?? Number.NaN, 2), 9)} ms  ${describePlan(plan)}`,
    );
  }
  return lines;
}

let status = 1;
try {
  status = await main();
} catch (error) {
  log(`failed: ${error instanceof Error ? error.message : String(error)}`);
} finally {
  await cleanUp();
}
process.exit(status);
