/**
 * `npm run bench:money`: what the money record costs.
 *
 * 1. Gift creates with 3 designations and 2 soft credits, next to plain gift creates, through
 *    the same API and worker processes in the same run (target: at least 0.7x).
 * 2. `GET /donors/{id}` of a donor with 10,000 gifts, 1,000 of them refunded, who holds 2,000
 *    soft credits on other donors' gifts (target: p50 under 20 ms).
 * 3. `GET /donors/{id}` of a household with 6 members and 20,000 gifts among them, 2,000 of them
 *    refunded in part and 1,000 soft-credited to the household (target: p50 under 20 ms).
 *
 * Environment: DATABASE_URL (a server where a scratch database may be created), REDIS_URL,
 * BENCH_SECONDS (per phase, default 10), BENCH_CONNECTIONS (default 50).
 */
import { sql } from 'slonik';
import { createInstitution } from '../common/institutions.js';
import { freePort, until } from './processes.js';
import { printPhases, runPhase } from './phases.js';
import { convertAtPar, insertBenchRecords, withBenchStack } from './stack.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);

async function main(): Promise<void> {
  await withBenchStack('money', async ({ pool, spawn }) => {
    const { institution, apiKey } = await createInstitution(pool, 'Benchmark University', 'USD');
    const id = institution.id;
    const { donorIds, fundIds } = await insertBenchRecords(pool, id, { donors: 4, funds: 3 });
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
    const gifts = {
      url: `${base}/gifts`,
      method: 'POST' as const,
      headers: auth,
      keyed: true,
      connections,
      seconds,
    };
    const phases = [
      await runPhase('plain gift create', { ...gifts, body: plain }),
      await runPhase('3 designations + 2 soft credits', { ...gifts, body: split }),
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
    await convertAtPar(pool, id);
    // The seed's inserts and convertAtPar's update leave half the heap dead and no page marked
    // all-visible, which autovacuum would have seen to in a live database within a minute.
    await pool.query(sql.unsafe`VACUUM ANALYZE gifts, gift_refunds`);
    const detail = await runPhase(
      'GET /donors/{id}: 10,000 gifts, 1,000 refunds, 2,000 soft credits',
      { url: `${base}/donors/${giver}`, headers: auth, connections: 4, seconds },
    );

    // A household of 6 members with 20,000 gifts among them (and its own), 2,000 refunded in
    // part, 1,000 of the members' gifts soft-credited to the household (counted once).
    const household = Number(
      await pool.oneFirst(sql.unsafe`
        INSERT INTO donors (institution_id, role, organization_name, status, gives_anonymously)
        VALUES (${id}, 'Household', 'The Bench Household', 'active', false) RETURNING id`),
    );
    const members = (await insertBenchRecords(pool, id, { donors: 6, funds: 0 })).donorIds;
    await pool.query(sql.unsafe`
      UPDATE donors SET household_id = ${household}
      WHERE institution_id = ${id} AND id = ANY(${sql.array(members, 'int8')})`);
    const givers = [...members, household];
    await pool.query(sql.unsafe`
      INSERT INTO gifts (institution_id, donor_id, amount, currency, subject, gift_date, type,
                         designations, fund_ids, amount_refunded, soft_credits,
                         soft_credit_donor_ids)
      SELECT ${id}, (${sql.array(givers, 'int8')})[1 + n % ${givers.length}], 100, 'USD',
             'Seeded', DATE '2020-01-01' + (n % 2000), 'cash',
             jsonb_build_array(jsonb_build_object('fund_id', ${fundIds[1]!}::bigint,
               'amount', 100, 'amount_refunded', CASE WHEN n <= 2000 THEN 25 ELSE 0 END)),
             ARRAY[${fundIds[1]!}::bigint],
             CASE WHEN n <= 2000 THEN 25 ELSE 0 END,
             CASE WHEN n > 19000 AND n % ${givers.length} < ${members.length}
               THEN jsonb_build_array(jsonb_build_object('donor_id', ${household}::bigint,
                 'amount', 100, 'reason', 'household'))
               ELSE '[]'::jsonb END,
             CASE WHEN n > 19000 AND n % ${givers.length} < ${members.length}
               THEN ARRAY[${household}::bigint] ELSE ARRAY[]::bigint[] END
      FROM generate_series(1, 20000) AS n`);
    await pool.query(sql.unsafe`
      INSERT INTO gift_refunds (institution_id, gift_id, amount, refund_date, designations)
      SELECT ${id}, g.id, 25, g.gift_date + 1,
             jsonb_build_array(jsonb_build_object('fund_id', ${fundIds[1]!}::bigint, 'amount', 25))
      FROM gifts g
      WHERE g.institution_id = ${id} AND g.amount_refunded > 0 AND ${fundIds[1]!}::bigint = ANY(g.fund_ids)`);
    await convertAtPar(pool, id);
    await pool.query(sql.unsafe`VACUUM ANALYZE donors, gifts, gift_refunds`);
    const householdDetail = await runPhase(
      'GET /donors/{id}: a household of 6 members, 20,000 gifts among them',
      { url: `${base}/donors/${household}`, headers: auth, connections: 4, seconds },
    );
    const ratio = phases[1]!.perSecond / phases[0]!.perSecond;
    printPhases(`Money record benchmark (${seconds} s per phase, ${connections} connections)`, [
      ...phases,
      detail,
      householdDetail,
    ]);
    console.log(
      `\nsplit create / plain create: ${ratio.toFixed(2)}x (target ≥ 0.7x: ${ratio >= 0.7 ? 'met' : 'missed'})`,
    );
    console.log(
      `donor detail p50: ${detail.p50} ms (target < 20 ms: ${detail.p50 < 20 ? 'met' : 'missed'})`,
    );
    console.log(
      `household detail p50: ${householdDetail.p50} ms (target < 20 ms: ${householdDetail.p50 < 20 ? 'met' : 'missed'})`,
    );
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
