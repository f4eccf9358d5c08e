/**
 * `npm run bench:reports`: the fiscal-year reports (fundraising.md §5) on 1,000,000 gifts over
 * 200,000 donors and 5 fiscal years, side by side in one run:
 *
 * 1. gift creates through the API and one worker with the reports' month rows kept by the
 *    writes, and with their triggers disabled (the build before them): target at least 0.9x;
 * 2. the first page of LYBUNT, SYBUNT and first-time donors (target p50 < 50 ms each),
 *    retention (p50 < 200 ms) and a donor's giving summary (p50 < 10 ms); retention again as it
 *    reads from the months while the years wait to be built for a new start month;
 * 3. the same reports computed by a plain aggregate over the gifts table (what a report without
 *    kept totals, or a nightly batch, costs at each read), with the ratio to ours.
 *
 * Environment: DATABASE_URL (a server where a scratch database may be created), REDIS_URL,
 * BENCH_SECONDS (per phase, default 10), BENCH_CONNECTIONS (writes, default 50), BENCH_GIFTS
 * (default 1,000,000), BENCH_DONORS (default 200,000).
 */
import { performance } from 'node:perf_hooks';
import { sql, type DatabasePool, type QuerySqlToken } from 'slonik';
import { createInstitution } from '../common/institutions.js';
import { freePort, until } from './processes.js';
import { printPhases, runPhase, type Phase } from './phases.js';
import { insertBenchRecords, withBenchStack } from './stack.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
const GIFTS = Number(process.env.BENCH_GIFTS ?? 1_000_000);
const DONORS = Number(process.env.BENCH_DONORS ?? 200_000);
const YEAR = 2027;
const TRIGGERS = ['giving_months_after_insert', 'giving_months_after_update'];

/** p50 in ms of `runs` runs of a statement, one at a time. */
async function p50Of(pool: DatabasePool, statement: QuerySqlToken, runs: number) {
  const times: number[] = [];
  for (let n = 0; n < runs; n++) {
    const started = performance.now();
    await pool.any(statement);
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

/** Statements of the set-up that run past the pool's statement timeout. */
async function unlimited(pool: DatabasePool, statements: QuerySqlToken[]): Promise<void> {
  await pool.connect(async (connection) => {
    await connection.query(sql.unsafe`SET statement_timeout = 0`);
    for (const statement of statements) await connection.query(statement);
    await connection.query(sql.unsafe`RESET statement_timeout`);
  });
}

/** Waits until the worker has written every gift the load left queued. */
async function settled(pool: DatabasePool, institutionId: number): Promise<void> {
  const count = () =>
    pool.oneFirst(sql.unsafe`SELECT count(*) FROM gifts WHERE institution_id = ${institutionId}`);
  for (let last = await count(); ;) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const now = await count();
    if (now === last) return;
    last = now;
  }
}

/** As autovacuum would leave the tables. */
const vacuum = (pool: DatabasePool, tables: string[]) =>
  unlimited(
    pool,
    tables.map((table) => sql.unsafe`VACUUM ANALYZE ${sql.identifier([table])}`),
  );

async function main(): Promise<void> {
  await withBenchStack('reports', async ({ pool, spawn }) => {
    const { institution, apiKey } = await createInstitution(pool, 'Benchmark University', 'USD');
    const { donorIds, fundIds } = await insertBenchRecords(pool, institution.id, {
      donors: DONORS,
      funds: 1,
    });
    const donors = sql.array(donorIds, 'int8');
    // Five fiscal years (calendar years: the default start month), 2023 to 2027; each donor's
    // gifts fall in a pattern of years of its own, so that every report has donors in it.
    const seeding = performance.now();
    for (let from = 0; from < GIFTS; from += 25_000)
      await pool.query(sql.unsafe`
        INSERT INTO gifts (institution_id, donor_id, amount, currency, exchange_rate, base_amount,
                           subject, gift_date, type)
        SELECT ${institution.id}, (${donors})[1 + n % ${donorIds.length}], 10 + n % 490, 'USD', 1,
               10 + n % 490, 'Seeded',
               make_date(2023 + ((n / ${donorIds.length}) * 7 + n % 11) % 5, 1 + n % 12, 1 + n % 28),
               'cash'
        FROM generate_series(${from}::int, ${Math.min(from + 25_000, GIFTS) - 1}::int) AS n`);
    await vacuum(pool, ['gifts', 'giving_months', 'giving_years']);
    const seeded = ((performance.now() - seeding) / 1000).toFixed(0);

    const port = await freePort();
    spawn('api/main.js', { PORT: String(port) });
    spawn('worker/main.js');
    const base = `http://127.0.0.1:${port}/api/v1`;
    const auth = { 'X-Service-API-Key': apiKey.key };
    const giftOf = (n: number) =>
      JSON.stringify({
        donor_id: donorIds[(n * 7919) % donorIds.length],
        amount: 25,
        subject: 'Benchmark gift',
        gift_date: '2027-03-01',
        fund_id: fundIds[0],
      });
    await until(
      'the API and a worker',
      async () =>
        (
          await fetch(`${base}/gifts`, {
            method: 'POST',
            headers: { ...auth, 'Content-Type': 'application/json' },
            body: giftOf(0),
          })
        ).status === 201,
    );
    const writes = {
      url: `${base}/gifts`,
      method: 'POST' as const,
      headers: auth,
      keyed: true,
      connections,
      seconds,
    };
    const setTriggers = async (enabled: boolean) => {
      for (const trigger of TRIGGERS)
        await pool.query(
          sql.unsafe`ALTER TABLE gifts ${enabled ? sql.fragment`ENABLE` : sql.fragment`DISABLE`}
                     TRIGGER ${sql.identifier([trigger])}`,
        );
    };
    await setTriggers(false);
    const before = await runPhase('gift create, reports not kept (the build before)', {
      ...writes,
      bodyOf: (n) => giftOf(n + 1),
    });
    await settled(pool, institution.id);
    await setTriggers(true);
    const kept = await runPhase('gift create, reports kept by the writes', {
      ...writes,
      bodyOf: (n) => giftOf(n + 1_000_000),
    });
    await settled(pool, institution.id);
    // The gifts created while the triggers were off are in no month row: the rows are made
    // again from the gifts, as the migration first made them, so that the reports read what
    // the gifts say.
    await unlimited(pool, [sql.unsafe`SELECT giving_months_rebuild(${institution.id})`]);
    await vacuum(pool, ['giving_months', 'giving_years']);

    const reads = { headers: auth, connections: 4, seconds };
    const phases: Phase[] = [before, kept];
    for (const report of ['lybunt', 'sybunt', 'first-time-donors'])
      phases.push(
        await runPhase(`GET /reports/${report} first page`, {
          url: `${base}/reports/${report}?fiscal_year=${YEAR}`,
          ...reads,
        }),
      );
    phases.push(
      // One at a time: each reads two fiscal years of every donor.
      await runPhase('GET /reports/retention', {
        url: `${base}/reports/retention?fiscal_year=${YEAR}`,
        ...reads,
        connections: 1,
      }),
      await runPhase('GET /donors/{id}/giving-summary', {
        url: `${base}/donors/${donorIds[4242]}/giving-summary`,
        ...reads,
      }),
    );
    // Retention as it reads right after a change of the start month, before the worker's
    // maintenance builds the years again: from the months (the build before giving_years).
    const recorded = (month: number) =>
      pool.query(sql.unsafe`
        UPDATE institutions SET giving_years_start_month = ${month} WHERE id = ${institution.id}`);
    await recorded(2);
    phases.push(
      await runPhase('GET /reports/retention, from the months', {
        url: `${base}/reports/retention?fiscal_year=${YEAR}`,
        ...reads,
        connections: 1,
      }),
    );
    await recorded(1);

    // The plain aggregates over the gifts table: each unit's counted totals in Y−1 and Y.
    const counted = sql.fragment`
      FROM gifts g WHERE g.institution_id = ${institution.id} AND g.status = 'posted'
        AND g.base_amount > g.base_amount_refunded`;
    const inYear = (year: number) =>
      sql.fragment`g.gift_date >= make_date(${year}::int, 1, 1) AND g.gift_date < make_date(${year + 1}::int, 1, 1)`;
    const plainLybunt = sql.unsafe`
      SELECT g.donor_id ${counted} AND g.gift_date < make_date(${YEAR + 1}::int, 1, 1)
      GROUP BY g.donor_id
      HAVING bool_or(${inYear(YEAR - 1)}) AND NOT bool_or(${inYear(YEAR)})
      ORDER BY g.donor_id DESC LIMIT 26`;
    const plainRetention = sql.unsafe`
      SELECT count(*) FILTER (WHERE p > 0), count(*) FILTER (WHERE p > 0 AND c > 0)
      FROM (SELECT g.donor_id,
                   sum(g.base_amount - g.base_amount_refunded) FILTER (WHERE ${inYear(YEAR - 1)}) AS p,
                   sum(g.base_amount - g.base_amount_refunded) FILTER (WHERE ${inYear(YEAR)}) AS c
            ${counted} AND g.gift_date >= make_date(${YEAR - 1}::int, 1, 1)
              AND g.gift_date < make_date(${YEAR + 1}::int, 1, 1)
            GROUP BY g.donor_id) u`;
    const lybuntPlain = await p50Of(pool, plainLybunt, 5);
    const retentionPlain = await p50Of(pool, plainRetention, 5);

    printPhases(
      `Reports benchmark (${GIFTS.toLocaleString('en')} gifts over ${DONORS.toLocaleString('en')} donors, seeded in ${seeded} s; ${seconds} s per phase)`,
      phases,
    );
    const ratio = kept.perSecond / before.perSecond;
    const verdict = (met: boolean) => (met ? 'met' : 'missed');
    // A phase that completed no request met nothing.
    const under = (phase: Phase, ms: number) => verdict(phase.perSecond > 0 && phase.p50 < ms);
    console.log(
      `\ngift create with the reports kept / before: ${ratio.toFixed(2)}x (target ≥ 0.9x: ${verdict(ratio >= 0.9)})`,
    );
    for (const [index, name] of ['lybunt', 'sybunt', 'first-time-donors'].entries())
      console.log(
        `${name} first page p50: ${phases[2 + index]!.p50} ms (target < 50 ms: ${under(phases[2 + index]!, 50)})`,
      );
    const retention = phases[5]!;
    const summary = phases[6]!;
    const fromMonths = phases[7]!;
    console.log(
      `retention p50: ${retention.p50} ms (target < 200 ms: ${under(retention, 200)}); from the months, as after a change of the start month until the years are built again: ${fromMonths.p50} ms (${(fromMonths.p50 / retention.p50).toFixed(2)}x)`,
    );
    console.log(`giving summary p50: ${summary.p50} ms (target < 10 ms: ${under(summary, 10)})`);
    console.log(
      `plain aggregate over the gifts table, the same question (SQL alone, no HTTP), and its time ÷ ours through the API: LYBUNT first page ${lybuntPlain.toFixed(1)} ms (${(lybuntPlain / phases[2]!.p50).toFixed(2)}x), retention ${retentionPlain.toFixed(0)} ms (${(retentionPlain / retention.p50).toFixed(2)}x)`,
    );
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
