/**
 * `npm run bench:duplicates`: what keeping duplicate pairs current costs a donor write, and what
 * reading them costs.
 *
 * 1. Donor creates (name, phone, postal code, a listed email; one in 20 a namesake of an earlier
 *    one) with the matching on, next to the same creates with it off (the triggers on donors
 *    disabled in the scratch database: the same build, the same processes), alternated in one
 *    run (target: at least 0.9x).
 * 2. `GET /duplicates`, first page, at 100,000 donors of which 5% duplicate an earlier one
 *    (target: p50 under 50 ms), with `min_score=80`, next to `GET /institution` (the cost of the
 *    HTTP stack alone).
 *
 * Environment: DATABASE_URL (a server where a scratch database may be created), REDIS_URL,
 * BENCH_SECONDS (per phase, default 10), BENCH_CONNECTIONS (default 50).
 */
import { sql, type DatabasePool } from 'slonik';
import { createInstitution } from '../common/institutions.js';
import { freePort, until } from './processes.js';
import { combined, printPhases, runPhase, type Phase } from './phases.js';
import { withBenchStack } from './stack.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
const DONORS = 100_000;
/** One donor in this many copies an earlier donor's name and one of its contact points. */
const DUPLICATE_EVERY = 20;
const TRIGGERS = [
  'donors_duplicates_insert',
  'donors_duplicates_update',
  'donors_duplicates_delete',
];

/** Turns the matching on or off for the whole scratch database (between phases, no load). */
async function matching(pool: DatabasePool, on: boolean): Promise<void> {
  for (const trigger of TRIGGERS)
    await pool.query(
      on
        ? sql.unsafe`ALTER TABLE donors ENABLE TRIGGER ${sql.identifier([trigger])}`
        : sql.unsafe`ALTER TABLE donors DISABLE TRIGGER ${sql.identifier([trigger])}`,
    );
}

/** The n-th donor of the creates: a new person, or (one in 20) a namesake of an earlier one. */
function person(n: number): string {
  const namesake = n % DUPLICATE_EVERY === 0 && n > 0;
  const who = namesake ? Math.floor(n / 2) : n;
  return JSON.stringify({
    role: 'Individual',
    first_name: 'Ada',
    last_name: `Lovelace ${who}`,
    phone: `+44 20 7946 ${String(who % 10_000).padStart(4, '0')}`,
    address: { line1: '12 St James Square', city: 'London', postal_code: `SW1Y ${who % 10}AA` },
    emails: [{ address: `ada.${n}@home.example.org`, type: 'home' }],
  });
}

async function main(): Promise<void> {
  await withBenchStack('duplicates', async ({ pool, spawn }) => {
    const { institution, apiKey } = await createInstitution(pool, 'Benchmark University', 'USD');
    const id = institution.id;
    const port = await freePort();
    spawn('api/main.js', { PORT: String(port) });
    spawn('worker/main.js');
    const base = `http://127.0.0.1:${port}/api/v1`;
    const auth = { 'X-Service-API-Key': apiKey.key };
    await until('the API and a worker', async () => {
      const response = await fetch(`${base}/donors`, {
        method: 'POST',
        headers: { ...auth, 'Content-Type': 'application/json', 'Idempotency-Key': 'warm-up' },
        body: person(0),
      });
      return response.status === 201;
    });

    // Every create is a new donor, numbered across phases so that no phase repeats another's.
    let issued = 1;
    const creates = {
      url: `${base}/donors`,
      method: 'POST' as const,
      headers: auth,
      keyed: true,
      connections,
      seconds: Math.max(1, seconds / 2),
      body: person(1),
      bodyOf: () => person(issued++),
    };
    await runPhase('warm-up', { ...creates, seconds: Math.min(3, seconds) });
    // Alternated, two halves each: on a shared machine the load drifts within a run.
    const rounds: Phase[][] = [[], []];
    for (let round = 0; round < 2; round++) {
      await matching(pool, false);
      rounds[0]!.push(await runPhase(`off ${round}`, creates));
      await matching(pool, true);
      rounds[1]!.push(await runPhase(`on ${round}`, creates));
    }
    const writes = [
      combined('donor create, matching off', rounds[0]!),
      combined('donor create, matching on', rounds[1]!),
    ];
    const created = Number(
      await pool.oneFirst(
        sql.unsafe`SELECT count(*)::int FROM donors WHERE institution_id = ${id}`,
      ),
    );

    // The read at 100,000 donors of another institution, 5% of them duplicates, written in
    // batches as an import would (the triggers make the pairs).
    const reader = await createInstitution(pool, 'Duplicates University', 'USD');
    const readerId = reader.institution.id;
    for (let start = 1; start <= DONORS; start += 10_000)
      await pool.query(sql.unsafe`
        INSERT INTO donors (institution_id, role, first_name, last_name, email, phone, address,
                            status, gives_anonymously)
        SELECT ${readerId}, 'Individual', 'Donor',
               'Surname ' || CASE WHEN n % ${DUPLICATE_EVERY} = 0 THEN n - 1 ELSE n END,
               'donor' || n || '@example.org',
               CASE WHEN n % 2 = 1 OR n % (2 * ${DUPLICATE_EVERY}) = 0 THEN '555 ' || (CASE WHEN n % ${DUPLICATE_EVERY} = 0 THEN n - 1 ELSE n END) END,
               NULL, 'active', false
        FROM generate_series(${start}::int, ${Math.min(start + 9_999, DONORS)}::int) AS n`);
    await pool.query(sql.unsafe`ANALYZE donors, duplicate_pairs, donor_match_keys`);
    const pairs = Number(
      await pool.oneFirst(
        sql.unsafe`SELECT count(*)::int FROM duplicate_pairs WHERE institution_id = ${readerId}`,
      ),
    );
    const readerAuth = { 'X-Service-API-Key': reader.apiKey.key };
    const reads = [
      await runPhase('GET /duplicates, first page', {
        url: `${base}/duplicates`,
        headers: readerAuth,
        connections: 4,
        seconds,
      }),
      await runPhase('GET /duplicates?min_score=80, first page', {
        url: `${base}/duplicates?min_score=80`,
        headers: readerAuth,
        connections: 4,
        seconds,
      }),
      await runPhase('GET /institution (the stack alone)', {
        url: `${base}/institution`,
        headers: readerAuth,
        connections: 4,
        seconds,
      }),
    ];

    const ratio = writes[1]!.perSecond / writes[0]!.perSecond;
    printPhases(`Duplicates benchmark (${seconds} s per write phase, ${connections} connections)`, [
      ...writes,
      ...reads,
    ]);
    console.log(
      `\n${created} donors created; the read's institution: ${DONORS} donors, ${pairs} pairs`,
    );
    console.log(
      `create with matching / without: ${ratio.toFixed(2)}x (target ≥ 0.9x: ${ratio >= 0.9 ? 'met' : 'missed'})`,
    );
    console.log(
      `GET /duplicates p50: ${reads[0]!.p50} ms (target < 50 ms: ${reads[0]!.p50 < 50 ? 'met' : 'missed'})`,
    );
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
