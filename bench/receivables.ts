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
import autocannon from 'autocannon';
import { sql } from 'slonik';
import { createInstitution } from '../common/institutions.js';
import { freePort, until } from './processes.js';
import { withBenchStack } from './stack.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 10);
const PLEDGES = 100_000;

interface Phase {
  name: string;
  perSecond: number;
  p50: number;
  p99: number;
  errors: number;
}

async function run(name: string, url: string, headers: Record<string, string>): Promise<Phase> {
  const result = await autocannon({ url, connections, duration: seconds, headers });
  return {
    name,
    perSecond: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.non2xx,
  };
}

async function main(): Promise<void> {
  await withBenchStack('receivables', async ({ pool, spawn }) => {
    const { institution, apiKey } = await createInstitution(pool, 'Benchmark University', 'USD');
    const id = institution.id;
    const donorIds = (
      await pool.anyFirst(sql.unsafe`
        INSERT INTO donors (institution_id, role, first_name, last_name, status, gives_anonymously)
        SELECT ${id}, 'Individual', 'Bench', 'Donor ' || n, 'active', false
        FROM generate_series(1, 1000) AS n RETURNING id`)
    ).map(Number);
    const fundIds = (
      await pool.anyFirst(sql.unsafe`
        INSERT INTO funds (institution_id, name, code, restriction, endowed, status)
        SELECT ${id}, 'Fund ' || n, 'F' || n, 'unrestricted', false, 'active'
        FROM generate_series(1, 3) AS n RETURNING id`)
    ).map(Number);
    const firstDonor = donorIds[0]!;
    const firstFund = fundIds[0]!;
    // Pledges of 1,200.00 in 12 monthly installments of 100.00 from 2026-01-31 (clamped to each
    // month's end, as the service expands them); every fifth one has 150.00 paid.
    await pool.query(sql.unsafe`
      INSERT INTO pledges (institution_id, donor_id, amount, pledge_date, designations, fund_ids,
                           schedule, installments, amount_paid, next_due_on, fund_outstanding)
      SELECT ${id}, ${firstDonor}::bigint + (n % 1000), 1200, DATE '2026-01-01',
             jsonb_build_array(jsonb_build_object('fund_id', ${firstFund}::bigint + (n % 3), 'amount', 1200)),
             ARRAY[${firstFund}::bigint + (n % 3)],
             '{"frequency": "monthly", "installments": 12, "first_due_on": "2026-01-31"}'::jsonb,
             (SELECT jsonb_agg(jsonb_build_object('number', k, 'amount', 100,
                'due_on', (date_trunc('month', DATE '2026-01-01' + make_interval(months => k - 1))
                           + interval '1 month - 1 day')::date::text) ORDER BY k)
              FROM generate_series(1, 12) AS k),
             CASE WHEN n % 5 = 0 THEN 150 ELSE 0 END,
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
    await pool.query(sql.unsafe`ANALYZE pledges, gifts`);

    const port = await freePort();
    spawn('api/main.js', { PORT: String(port) });
    const base = `http://127.0.0.1:${port}/api/v1`;
    const auth = { 'X-Service-API-Key': apiKey.key };
    await until('the API', async () => (await fetch(`${base}/gifts`, { headers: auth })).ok);
    const phases = [
      await run('GET /gifts (first page, 10 rows)', `${base}/gifts`, auth),
      await run(
        'GET /pledges/receivables (first page, 10 rows)',
        `${base}/pledges/receivables`,
        auth,
      ),
      await run(
        'GET /pledges/receivables?due_before=2026-02-01&fund_id=… (first page)',
        `${base}/pledges/receivables?due_before=2026-02-01&fund_id=${firstFund}`,
        auth,
      ),
    ];
    console.log(
      `\nReceivables benchmark: ${PLEDGES.toLocaleString('en')} open pledges, ${seconds} s per phase, ${connections} connections\n`,
    );
    console.log(
      'phase'.padEnd(72),
      'req/s'.padStart(8),
      'p50 ms'.padStart(8),
      'p99 ms'.padStart(8),
      'errors'.padStart(7),
    );
    for (const phase of phases)
      console.log(
        phase.name.padEnd(72),
        phase.perSecond.toFixed(0).padStart(8),
        String(phase.p50).padStart(8),
        String(phase.p99).padStart(8),
        String(phase.errors).padStart(7),
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
