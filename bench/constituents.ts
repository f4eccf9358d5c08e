/**
 * `npm run bench:constituents`: what a donor's contact points and its eligibility cost.
 *
 * 1. Donor creates with 3 emails, 2 phones, 2 addresses (one seasonal) and a household, next to
 *    plain donor creates, through the same API and worker processes in the same run (target: at
 *    least 0.8x).
 * 2. `GET /donors/{id}/eligibility` of a donor with 200 consents over every channel and several
 *    purposes (target: p50 under 5 ms), next to `GET /institution` (the cheapest read, the cost
 *    of the HTTP stack alone) and to the eligibility's own statements timed here, without HTTP.
 *
 * Environment: DATABASE_URL (a server where a scratch database may be created), REDIS_URL,
 * BENCH_SECONDS (per phase, default 10), BENCH_CONNECTIONS (default 50).
 */
import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { createInstitution } from '../common/institutions.js';
import { donorEligibility } from '../common/resources/donors/eligibility.js';
import { freePort, until } from './processes.js';
import { combined, printPhases, runPhase, type Phase } from './phases.js';
import { insertBenchRecords, withBenchStack } from './stack.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
/** A household holds at most 100 members: creates are spread over this many, in turn. */
const HOUSEHOLDS = 1000;

async function main(): Promise<void> {
  await withBenchStack('constituents', async ({ pool, spawn }) => {
    const { institution, apiKey } = await createInstitution(pool, 'Benchmark University', 'USD');
    const id = institution.id;
    const { donorIds } = await insertBenchRecords(pool, id, { donors: 1, funds: 0 });
    const households = (
      await pool.anyFirst(sql.type(z.object({ id: z.coerce.number() }))`
        INSERT INTO donors (institution_id, role, last_name, status, gives_anonymously)
        SELECT ${id}, 'Household', 'Household ' || n, 'active', false
        FROM generate_series(1, ${HOUSEHOLDS}::int) AS n RETURNING id`)
    ).map(Number);

    const port = await freePort();
    spawn('api/main.js', { PORT: String(port) });
    spawn('worker/main.js');
    const base = `http://127.0.0.1:${port}/api/v1`;
    const auth = { 'X-Service-API-Key': apiKey.key };
    // Each created donor a person of their own: namesakes, or donors sharing an email, would all
    // pair with each other (constituents.md §5, every candidate pair), and the pairs' growth,
    // not the contact points, would be what is measured (bench:duplicates measures matching).
    let people = 0;
    const person = () => {
      const n = people++;
      return {
        n,
        body: {
          role: 'Individual',
          first_name: 'Ada',
          last_name: `Lovelace ${n}`,
          phone: '+44 20 7946 0000',
          address: { line1: '12 St James Square', city: 'London', country: 'GB' },
        },
      };
    };
    const plain = () => JSON.stringify(person().body);
    const withLists = (household: boolean, index: number) => {
      const { n, body } = person();
      return JSON.stringify({
        ...body,
        ...(household ? { household_id: households[index % HOUSEHOLDS] } : {}),
        emails: [
          { address: `ada.${n}@home.example.org`, type: 'home' },
          { address: `ada.${n}@work.example.org`, type: 'work' },
          { address: `ada.${n}@old.example.org`, type: 'other', status: 'bounced' },
        ],
        phones: [
          { number: '+44 7700 900000', type: 'mobile' },
          { number: '+44 20 7946 0001', type: 'work' },
        ],
        addresses: [
          {
            line1: '3 Via Roma',
            city: 'Sorrento',
            country: 'IT',
            type: 'seasonal',
            seasonal_from: '06-01',
            seasonal_to: '08-31',
          },
          { line1: '1 Lombard St', city: 'London', country: 'GB', type: 'work' },
        ],
      });
    };
    const reached = (index: number) => withLists(true, index);
    // The contact points alone: what the household's lock and member count add is the rest.
    const listedOnly = (index: number) => withLists(false, index);
    await until('the API and a worker', async () => {
      const response = await fetch(`${base}/donors`, {
        method: 'POST',
        headers: { ...auth, 'Content-Type': 'application/json', 'Idempotency-Key': 'warm-up' },
        body: plain(),
      });
      return response.status === 201;
    });
    const creates = {
      url: `${base}/donors`,
      method: 'POST' as const,
      headers: auth,
      keyed: true,
      connections,
      seconds,
    };
    // Unmeasured: the processes' first seconds (JIT, pools) would be charged to the first phase.
    await runPhase('warm-up', {
      ...creates,
      seconds: Math.min(3, seconds),
      body: plain(),
      bodyOf: plain,
    });
    // Alternated, two halves each: on a shared machine the load drifts within a run, and one
    // phase after the other would charge the drift to the comparison.
    const half = { ...creates, seconds: Math.max(1, seconds / 2) };
    const rounds: Phase[][] = [[], [], []];
    for (let round = 0; round < 2; round++) {
      rounds[0]!.push(await runPhase(`plain ${round}`, { ...half, body: plain(), bodyOf: plain }));
      rounds[1]!.push(
        await runPhase(`reached ${round}`, { ...half, body: reached(0), bodyOf: reached }),
      );
      rounds[2]!.push(
        await runPhase(`listed ${round}`, { ...half, body: listedOnly(0), bodyOf: listedOnly }),
      );
    }
    const phases = [
      combined('plain donor create', rounds[0]!),
      combined('3 emails, 2 phones, 2 addresses, household', rounds[1]!),
      combined('  the same without the household', rounds[2]!),
    ];

    // 200 consents on one donor: every channel, channel-wide and for four purposes.
    const donor = donorIds[0]!;
    await pool.query(sql.unsafe`
      INSERT INTO consents (institution_id, donor_id, channel, purpose, response, source,
                            statement, captured_at)
      SELECT ${id}, ${donor}, (ARRAY['email', 'mail', 'phone', 'sms'])[1 + n % 4],
             (ARRAY[NULL, 'newsletter', 'appeals', 'events', 'surveys'])[1 + (n / 4) % 5],
             CASE WHEN n % 3 = 0 THEN 'opt_out' ELSE 'opt_in' END, 'Seeded', 'Yes.',
             now() - make_interval(days => n)
      FROM generate_series(1, 200) AS n`);
    await pool.query(sql.unsafe`ANALYZE consents, donors`);
    const eligibility = await runPhase('GET /donors/{id}/eligibility: 200 consents', {
      url: `${base}/donors/${donor}/eligibility?channel=email&purpose=newsletter`,
      headers: auth,
      connections: 4,
      seconds,
    });
    const stack = await runPhase('GET /institution (the stack alone)', {
      url: `${base}/institution`,
      headers: auth,
      connections: 4,
      seconds,
    });
    const direct = await statementTimes(pool, id, donor);
    const ratio = phases[1]!.perSecond / phases[0]!.perSecond;
    const listedRatio = phases[2]!.perSecond / phases[0]!.perSecond;
    printPhases(`Constituents benchmark (${seconds} s per phase, ${connections} connections)`, [
      ...phases,
      eligibility,
      stack,
    ]);
    console.log(
      `\nreached create / plain create: ${ratio.toFixed(2)}x (target ≥ 0.8x: ${ratio >= 0.8 ? 'met' : 'missed'})`,
    );
    console.log(`without the household / plain create: ${listedRatio.toFixed(2)}x`);
    console.log(
      `eligibility p50: ${eligibility.p50} ms (target < 5 ms: ${eligibility.p50 < 5 ? 'met' : 'missed'}; GET /institution p50 ${stack.p50} ms)`,
    );
    console.log(
      `eligibility statements alone (donor + latest consents, no HTTP): p50 ${direct.p50.toFixed(2)} ms, p99 ${direct.p99.toFixed(2)} ms`,
    );
  });
}

/** The eligibility read called directly on the pool, one at a time: its database cost alone. */
async function statementTimes(pool: DatabasePool, institutionId: number, donorId: number) {
  const times: number[] = [];
  for (let run = 0; run < 500; run++) {
    const started = performance.now();
    await donorEligibility(pool, institutionId, donorId, 'email', 'newsletter');
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return { p50: times[250]!, p99: times[495]! };
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
