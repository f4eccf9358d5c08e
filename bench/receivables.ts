/**
 * `npm run bench:receivables`: the month-end list of what pledges still owe.
 *
 * Seeds 100,000 open pledges (12 monthly installments each, a fifth of them partly paid, all
 * designated to one of 3 funds) and as many gifts, then measures the first page of
 * `GET /pledges/receivables` against the first page of `GET /gifts` in the same run, through the
 * same API process (target: no slower than 1.5x in p50 latency).
 *
 * Environment: DATABASE_URL (a server where a scratch database may be created), REDIS_URL,
 * BENCH_SECONDS (per phase, default 10), BENCH_CONNECTIONS (default 10).
 */
import { sql } from 'slonik';
import { createInstitution } from '../common/institutions.js';
import { freePort, until } from './processes.js';
import { printPhases, runPhase, type Phase } from './phases.js';
import { convertAtPar, insertBenchRecords, withBenchStack } from './stack.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 10);
const PLEDGES = 100_000;

async function main(): Promise<void> {
  await withBenchStack('receivables', async ({ pool, spawn }) => {
    const { institution, apiKey } = await createInstitution(pool, 'Benchmark University', 'USD');
    const id = institution.id;
    const { donorIds, fundIds } = await insertBenchRecords(pool, id, { donors: 1000, funds: 3 });
    const firstDonor = donorIds[0]!;
    const firstFund = fundIds[0]!;
    // Pledges of 1,200.00 in 12 monthly installments of 100.00 from 2026-01-31 (clamped to each
    // month's end, as the service expands them); every fifth one has 150.00 paid.
    await pool.query(sql.unsafe`
      INSERT INTO pledges (institution_id, donor_id, amount, currency, exchange_rate, base_amount,
                           pledge_date, designations, fund_ids, schedule, installments,
                           amount_paid, base_amount_paid, base_balance, next_due_on,
                           fund_outstanding)
      SELECT ${id}, ${firstDonor}::bigint + (n % 1000), 1200, 'USD', 1, 1200, DATE '2026-01-01',
             jsonb_build_array(jsonb_build_object('fund_id', ${firstFund}::bigint + (n % 3), 'amount', 1200)),
             ARRAY[${firstFund}::bigint + (n % 3)],
             '{"frequency": "monthly", "installments": 12, "first_due_on": "2026-01-31"}'::jsonb,
             (SELECT jsonb_agg(jsonb_build_object('number', k, 'amount', 100,
                'due_on', (date_trunc('month', DATE '2026-01-01' + make_interval(months => k - 1))
                           + interval '1 month - 1 day')::date::text) ORDER BY k)
              FROM generate_series(1, 12) AS k),
             CASE WHEN n % 5 = 0 THEN 150 ELSE 0 END, CASE WHEN n % 5 = 0 THEN 150 ELSE 0 END,
             CASE WHEN n % 5 = 0 THEN 1050 ELSE 1200 END,
             CASE WHEN n % 5 = 0 THEN DATE '2026-02-28' ELSE DATE '2026-01-31' END,
             jsonb_build_array(jsonb_build_object('fund_id', ${firstFund}::bigint + (n % 3),
               'amount', CASE WHEN n % 5 = 0 THEN 1050 ELSE 1200 END))
      FROM generate_series(1, ${PLEDGES}) AS n`);
    await pool.query(sql.unsafe`
      INSERT INTO gifts (institution_id, donor_id, amount, currency, subject, gift_date, type,
                         designations, fund_ids)
      SELECT ${id}, ${firstDonor}::bigint + (n % 1000), 100, 'USD', 'Seeded',
             DATE '2025-01-01' + (n % 365), 'cash',
             jsonb_build_array(jsonb_build_object('fund_id', ${firstFund}::bigint, 'amount', 100,
               'amount_refunded', 0)),
             ARRAY[${firstFund}::bigint]
      FROM generate_series(1, ${PLEDGES}) AS n`);
    await convertAtPar(pool, id);
    await pool.query(sql.unsafe`ANALYZE pledges, gifts`);

    const port = await freePort();
    spawn('api/main.js', { PORT: String(port) });
    const base = `http://127.0.0.1:${port}/api/v1`;
    const auth = { 'X-Service-API-Key': apiKey.key };
    await until('the API', async () => (await fetch(`${base}/gifts`, { headers: auth })).ok);
    const load = { headers: auth, connections, seconds };
    const phases = [
      await runPhase('GET /gifts (first page, 10 rows)', { url: `${base}/gifts`, ...load }),
      await runPhase('GET /pledges/receivables (first page, 10 rows)', {
        url: `${base}/pledges/receivables`,
        ...load,
      }),
      await runPhase('GET /pledges/receivables?due_before=2026-02-01&fund_id=… (first page)', {
        url: `${base}/pledges/receivables?due_before=2026-02-01&fund_id=${firstFund}`,
        ...load,
      }),
    ];
    printPhases(
      `Receivables benchmark: ${PLEDGES.toLocaleString('en')} open pledges, ${seconds} s per phase, ${connections} connections`,
      phases,
    );
    const [gifts, receivables] = phases as [Phase, Phase];
    const ratio = gifts.perSecond / receivables.perSecond;
    console.log(
      `\nreceivables time per request / gifts: ${ratio.toFixed(2)}x (target ≤ 1.5x: ${ratio <= 1.5 ? 'met' : 'missed'})`,
    );
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
