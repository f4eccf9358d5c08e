/**
 * `npm run bench:merge`: what a donor merge costs, and what it costs the other tenants.
 *
 * Seeds, per merge, a source donor with 10,000 gifts, 500 soft credits on another donor's gifts
 * and 50 pledges (made through the API), then merges each source into one survivor through the
 * API (POST /donors/{id}/merge), one after the other, while another institution creates gifts
 * as fast as 50 connections let it. Prints each merge's time (target: under 2 s) and the other
 * institution's throughput during the merges beside its throughput alone, in the same run
 * (target: at least 0.8x).
 *
 * Environment: DATABASE_URL (a server where a scratch database may be created), REDIS_URL,
 * BENCH_MERGES (default 3), BENCH_CONNECTIONS (default 50).
 */
import { sql } from 'slonik';
import { createInstitution } from '../common/institutions.js';
import { freePort, until } from './processes.js';
import { printPhases, runPhase, type PhaseLoad } from './phases.js';
import { convertAtPar, insertBenchRecords, withBenchStack } from './stack.js';

const merges = Number(process.env.BENCH_MERGES ?? 3);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
const GIFTS = 10_000;
const SOFT_CREDITS = 500;
const PLEDGES = 50;

async function main(): Promise<void> {
  await withBenchStack('merge', async ({ pool, spawn }) => {
    const merging = await createInstitution(pool, 'Merging University', 'USD');
    const busy = await createInstitution(pool, 'Busy College', 'USD');
    const id = merging.institution.id;
    const { donorIds, fundIds } = await insertBenchRecords(pool, id, {
      donors: merges + 2,
      funds: 1,
    });
    const [survivor, giver, ...sources] = donorIds as [number, number, ...number[]];
    const fund = fundIds[0]!;
    const other = await insertBenchRecords(pool, busy.institution.id, { donors: 1, funds: 1 });

    const port = await freePort();
    spawn('api/main.js', { PORT: String(port) });
    spawn('worker/main.js');
    spawn('worker/main.js');
    const base = `http://127.0.0.1:${port}/api/v1`;
    const post = (key: string, path: string, body: object, idempotency: string) =>
      fetch(`${base}${path}`, {
        method: 'POST',
        headers: {
          'X-Service-API-Key': key,
          'Content-Type': 'application/json',
          'Idempotency-Key': idempotency,
        },
        body: JSON.stringify(body),
      });
    const busyGift = JSON.stringify({
      donor_id: other.donorIds[0],
      amount: 25,
      subject: 'Busy gift',
      gift_date: '2026-11-21',
      fund_id: other.fundIds[0],
    });
    await until('the API and a worker', async () => {
      const response = await fetch(`${base}/gifts`, {
        method: 'POST',
        headers: { 'X-Service-API-Key': busy.apiKey.key, 'Content-Type': 'application/json' },
        body: busyGift,
      });
      return response.status === 201;
    });

    for (const source of sources) {
      await pool.query(sql.unsafe`
        INSERT INTO gifts (institution_id, donor_id, amount, currency, subject, gift_date, type,
                           designations, fund_ids)
        SELECT ${id}, ${source}, 100, 'USD', 'Seeded', DATE '2020-01-01' + (n % 2000), 'cash',
               jsonb_build_array(jsonb_build_object('fund_id', ${fund}::bigint, 'amount', 100,
                 'amount_refunded', 0)),
               ARRAY[${fund}::bigint]
        FROM generate_series(1, ${GIFTS}::int) AS n`);
      await pool.query(sql.unsafe`
        INSERT INTO gifts (institution_id, donor_id, amount, currency, subject, gift_date, type,
                           soft_credits, soft_credit_donor_ids)
        SELECT ${id}, ${giver}, 50, 'USD', 'Seeded', DATE '2021-01-01' + (n % 1000), 'cash',
               jsonb_build_array(jsonb_build_object('donor_id', ${source}::bigint, 'amount', 50,
                 'reason', 'household')),
               ARRAY[${source}::bigint]
        FROM generate_series(1, ${SOFT_CREDITS}::int) AS n`);
      for (let n = 0; n < PLEDGES; n++) {
        const response = await post(
          merging.apiKey.key,
          '/pledges',
          {
            donor_id: source,
            amount: 1200,
            pledge_date: '2026-01-01',
            fund_id: fund,
            schedule: { frequency: 'monthly', installments: 12, first_due_on: '2026-02-01' },
          },
          `pledge-${source}-${n}`,
        );
        if (response.status !== 201) throw new Error(`pledge: ${response.status}`);
      }
    }
    await convertAtPar(pool, id);
    await pool.query(sql.unsafe`ANALYZE donors, gifts, pledges`);

    const load: PhaseLoad = {
      url: `${base}/gifts`,
      method: 'POST',
      headers: { 'X-Service-API-Key': busy.apiKey.key },
      body: busyGift,
      keyed: true,
      connections,
      seconds: 8,
    };
    // Warmed up first, so that the first measured phase is not charged with the start.
    await runPhase('warm-up', { ...load, seconds: 3 });
    const alone = await runPhase('other institution: gift creates alone', load);
    const times: number[] = [];
    const runMerges = async () => {
      // Let the load reach its pace first.
      await new Promise((resolve) => setTimeout(resolve, 1000));
      for (const source of sources) {
        const started = performance.now();
        const response = await post(
          merging.apiKey.key,
          `/donors/${survivor}/merge`,
          { source_id: source },
          `merge-${source}`,
        );
        times.push(performance.now() - started);
        if (response.status !== 200)
          throw new Error(`merge: ${response.status} ${await response.text()}`);
      }
    };
    // The load lasts as long as the merges, give or take a second on either side.
    const [during] = await Promise.all([
      runPhase('other institution: gift creates during merges', {
        ...load,
        seconds: Math.max(3, Math.ceil(1 + merges * 1.5)),
      }),
      runMerges(),
    ]);
    const moved = Number(
      await pool.oneFirst(sql.unsafe`
        SELECT count(*) FROM gifts WHERE institution_id = ${id} AND donor_id = ${survivor}`),
    );
    if (moved !== GIFTS * merges) throw new Error(`moved ${moved} gifts, not ${GIFTS * merges}`);

    printPhases(`Donor merge benchmark (${merges} merges, ${connections} connections)`, [
      alone,
      during,
    ]);
    const slowest = Math.max(...times);
    const ratio = during.perSecond / alone.perSecond;
    console.log(
      `\nmerge of ${GIFTS.toLocaleString('en')} gifts, ${SOFT_CREDITS} soft credits, ${PLEDGES} pledges: ${times
        .map((ms) => `${(ms / 1000).toFixed(2)} s`)
        .join(', ')} (target < 2 s: ${slowest < 2000 ? 'met' : 'missed'})`,
    );
    console.log(
      `other institution's gift creates during the merges / alone: ${alone.perSecond.toFixed(0)} and ${during.perSecond.toFixed(0)} a second, ${ratio.toFixed(2)}x (target ≥ 0.8x: ${ratio >= 0.8 ? 'met' : 'missed'})`,
    );
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
