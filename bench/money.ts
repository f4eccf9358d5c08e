/**
 * `npm run bench:money`: what the money record costs.
 *
 * 1. Gift creates with 3 designations and 2 soft credits, next to plain gift creates, through
 *    the same API and worker processes in the same run (target: at least 0.7x).
 * 2. `GET /donors/{id}` of a donor with 10,000 gifts, 1,000 of them refunded, who holds 2,000
 *    soft credits on other donors' gifts (target: p50 under 20 ms).
 *
 * Environment: DATABASE_URL (a server where a scratch database may be created), REDIS_URL,
 * BENCH_SECONDS (per phase, default 10), BENCH_CONNECTIONS (default 50).
 */
import autocannon from 'autocannon';
import { sql } from 'slonik';
import { createInstitution } from '../common/institutions.js';
import { freePort, until } from './processes.js';
import { withBenchStack } from './stack.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);

interface Phase {
  name: string;
  perSecond: number;
  p50: number;
  p99: number;
  errors: number;
}

async function run(
  name: string,
  options: { url: string; method: 'GET' | 'POST'; headers: Record<string, string> },
  body: string | undefined,
  keyed: boolean,
  load = connections,
): Promise<Phase> {
  let issued = 0;
  const result = await autocannon({
    url: options.url,
    connections: load,
    duration: seconds,
    method: options.method,
    headers: { 'Content-Type': 'application/json', ...options.headers },
    ...(body ? { body } : {}),
    ...(keyed
      ? {
          requests: [
            {
              setupRequest: (request: autocannon.Request) => ({
                ...request,
                headers: {
                  ...request.headers,
                  'Idempotency-Key': `${name}-${issued++}`,
                },
              }),
            },
          ],
        }
      : {}),
  });
  return {
    name,
    perSecond: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.non2xx,
  };
}

async function main(): Promise<void> {
  await withBenchStack('money', async ({ pool, spawn }) => {
    const { institution, apiKey } = await createInstitution(pool, 'Benchmark University', 'USD');
    const id = institution.id;
    const donorIds = (
      await pool.anyFirst(sql.unsafe`
        INSERT INTO donors (institution_id, role, first_name, last_name, status, gives_anonymously)
        SELECT ${id}, 'Individual', 'Bench', 'Donor ' || n, 'active', false
        FROM generate_series(1, 4) AS n RETURNING id`)
    ).map(Number);
    const fundIds = (
      await pool.anyFirst(sql.unsafe`
        INSERT INTO funds (institution_id, name, code, restriction, endowed, status)
        SELECT ${id}, 'Fund ' || n, 'F' || n, 'unrestricted', false, 'active'
        FROM generate_series(1, 3) AS n RETURNING id`)
    ).map(Number);
    const [donor, spouse, solicitor, giver] = donorIds as [number, number, number, number];

    const port = await freePort();
    spawn('api/main.js', { PORT: String(port) });
    spawn('worker/main.js');
    const base = `http://127.0.0.1:${port}/api/v1`;
    const auth = { 'X-Service-API-Key': apiKey.key };
    const plain = JSON.stringify({
      donor_id: donor,
      amount: 300,
      subject: 'Benchmark gift',
      gift_date: '2026-11-21',
    });
    const split = JSON.stringify({
      donor_id: donor,
      amount: 300,
      subject: 'Benchmark gift',
      gift_date: '2026-11-21',
      designations: fundIds.map((fund) => ({ fund_id: fund, amount: 100 })),
      soft_credits: [
        { donor_id: spouse, amount: 300, reason: 'household' },
        { donor_id: solicitor, amount: 300, reason: 'solicitor' },
      ],
    });
    await until('the API and a worker', async () => {
      const response = await fetch(`${base}/gifts`, {
        method: 'POST',
        headers: { ...auth, 'Content-Type': 'application/json' },
        body: plain,
      });
      return response.status === 201;
    });
    const gifts = { url: `${base}/gifts`, method: 'POST' as const, headers: auth };
    const phases = [
      await run('plain gift create', gifts, plain, true),
      await run('3 designations + 2 soft credits', gifts, split, true),
    ];

    // A donor of 10,000 gifts (1,000 refunded) holding 2,000 soft credits on another's gifts.
    await pool.query(sql.unsafe`
      INSERT INTO gifts (institution_id, donor_id, amount, currency, subject, gift_date, type,
                         designations, fund_ids, amount_refunded)
      SELECT ${id}, ${giver}, 100, 'USD', 'Seeded', DATE '2020-01-01' + (n % 2000), 'cash',
             jsonb_build_array(jsonb_build_object('fund_id', ${fundIds[0]!}::bigint,
               'amount', 100, 'amount_refunded', CASE WHEN n <= 1000 THEN 25 ELSE 0 END)),
             ARRAY[${fundIds[0]!}::bigint],
             CASE WHEN n <= 1000 THEN 25 ELSE 0 END
      FROM generate_series(1, 10000) AS n`);
    await pool.query(sql.unsafe`
      INSERT INTO gift_refunds (institution_id, gift_id, amount, refund_date, designations)
      SELECT ${id}, g.id, 25, g.gift_date + 1,
             jsonb_build_array(jsonb_build_object('fund_id', ${fundIds[0]!}::bigint, 'amount', 25))
      FROM gifts g WHERE g.institution_id = ${id} AND g.amount_refunded > 0`);
    await pool.query(sql.unsafe`
      INSERT INTO gifts (institution_id, donor_id, amount, currency, subject, gift_date, type,
                         soft_credits, soft_credit_donor_ids)
      SELECT ${id}, ${donor}, 50, 'USD', 'Seeded', DATE '2021-01-01' + (n % 1000), 'cash',
             jsonb_build_array(jsonb_build_object('donor_id', ${giver}::bigint, 'amount', 50,
               'reason', 'household')),
             ARRAY[${giver}::bigint]
      FROM generate_series(1, 2000) AS n`);
    await pool.query(sql.unsafe`ANALYZE gifts, gift_refunds`);
    const detail = await run(
      'GET /donors/{id}: 10,000 gifts, 1,000 refunds, 2,000 soft credits',
      { url: `${base}/donors/${giver}`, method: 'GET', headers: auth },
      undefined,
      false,
      4,
    );
    const ratio = phases[1]!.perSecond / phases[0]!.perSecond;
    console.log(`\nMoney record benchmark (${seconds} s per phase, ${connections} connections)\n`);
    console.log(
      'phase'.padEnd(70),
      'req/s'.padStart(8),
      'p50 ms'.padStart(8),
      'p99 ms'.padStart(8),
      'errors'.padStart(7),
    );
    for (const phase of [...phases, detail])
      console.log(
        phase.name.padEnd(70),
        phase.perSecond.toFixed(0).padStart(8),
        String(phase.p50).padStart(8),
        String(phase.p99).padStart(8),
        String(phase.errors).padStart(7),
      );
    console.log(
      `\nsplit create / plain create: ${ratio.toFixed(2)}x (target ≥ 0.7x: ${ratio >= 0.7 ? 'met' : 'missed'})`,
    );
    console.log(
      `donor detail p50: ${detail.p50} ms (target < 20 ms: ${detail.p50 < 20 ? 'met' : 'missed'})`,
    );
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
