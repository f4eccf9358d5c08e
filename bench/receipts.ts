/**
 * `npm run bench:receipts`: tax receipts issued all at once through the API and two worker
 * processes. Every issue of an institution takes its number from one row (the price of numbers
 * without gaps), so this measures how far that row's lock lets concurrent issues go. Prints
 * receipts per second and latencies, and whether the numbers are exactly 1..N.
 *
 * Environment: DATABASE_URL (a server where a scratch database may be created), REDIS_URL,
 * BENCH_RECEIPTS (how many, default 200).
 */
import { sql } from 'slonik';
import { z } from 'zod';
import { createInstitution } from '../common/institutions.js';
import { freePort, until } from './processes.js';
import { withBenchStack } from './stack.js';

const count = Number(process.env.BENCH_RECEIPTS ?? 200);

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;

async function main() {
  await withBenchStack('receipts', async ({ pool, spawn }) => {
    const { institution, apiKey } = await createInstitution(pool, 'Benchmark University', 'USD');
    const donorId = await pool.oneFirst(sql.type(z.object({ id: z.number() }))`
      INSERT INTO donors (institution_id, role, first_name, last_name, status, gives_anonymously)
      VALUES (${institution.id}, 'Individual', 'Bench', 'Donor', 'active', false) RETURNING id`);
    // The gifts to receipt are fixtures, inserted directly: only the issues are measured.
    const giftIds = await pool.anyFirst(sql.type(z.object({ id: z.number() }))`
      INSERT INTO gifts (institution_id, donor_id, amount, currency, subject, gift_date, type)
      SELECT ${institution.id}, ${donorId}, 10 + n, 'USD', 'Benchmark gift ' || n, '2026-01-15', 'cash'
      FROM generate_series(1, ${count}) AS n
      RETURNING id`);

    const apiPort = await freePort();
    spawn('api/main.js', { PORT: String(apiPort) });
    spawn('worker/main.js');
    spawn('worker/main.js');
    const base = `http://127.0.0.1:${apiPort}/api/v1`;
    const post = (path: string, body: object) =>
      fetch(`${base}${path}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Service-API-Key': apiKey.key },
        body: JSON.stringify(body),
      });
    // Ready once a write went through a worker; a gift, so that no receipt number is spent.
    await until('the API and the workers', async () => {
      const response = await post('/gifts', {
        donor_id: donorId,
        amount: 1,
        subject: 'Warm-up',
        gift_date: '2026-01-15',
      });
      return response.status === 201;
    });
    await new Promise((resolve) => setTimeout(resolve, 1_000));

    const started = performance.now();
    const answers = await Promise.all(
      giftIds.map(async (giftId) => {
        const sent = performance.now();
        const response = await post('/receipts', { gift_id: giftId });
        const body = (await response.json()) as { number?: number };
        return { status: response.status, number: body.number, ms: performance.now() - sent };
      }),
    );
    const seconds = (performance.now() - started) / 1000;

    const statuses: Record<string, number> = {};
    for (const answer of answers) statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
    const latencies = answers.map((answer) => answer.ms).sort((a, b) => a - b);
    const stored = (
      await pool.anyFirst(sql.type(z.object({ number: z.number() }))`
        SELECT number FROM receipts WHERE institution_id = ${institution.id} ORDER BY number`)
    ).map(Number);
    const gapFree =
      stored.length === count && stored.every((number, index) => number === index + 1);
    const answered = answers
      .map((answer) => answer.number ?? 0)
      .sort((a, b) => a - b)
      .every((number, index) => number === index + 1);

    console.log(
      `\nReceipt benchmark: ${count} issues at once, API + 2 workers, ${new Date().toISOString()}`,
    );
    console.table([
      {
        receipts: count,
        seconds: Number(seconds.toFixed(2)),
        'receipts/s': Math.round(count / seconds),
        'p50 ms': Math.round(percentile(latencies, 50)),
        'p99 ms': Math.round(percentile(latencies, 99)),
        statuses: JSON.stringify(statuses),
      },
    ]);
    console.log(
      `numbers stored: ${stored.length}, ${stored[0] ?? '-'}..${stored.at(-1) ?? '-'}; ` +
        `exactly 1..${count} with no gap: ${gapFree ? 'yes' : 'NO'}; ` +
        `the answers name 1..${count}: ${answered ? 'yes' : 'NO'}`,
    );
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
