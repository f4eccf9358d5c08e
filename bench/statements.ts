/**
 * `npm run bench:statements`: year-end giving statements, side by side in one run.
 *
 * - A run for BENCH_DONORS donors (default 10,000), each with two gifts in 2025 seeded by SQL,
 *   through a real API and one worker process started with the Node options of
 *   `npm run start:worker`: statements per second from the 202 to `completed`, and the worker's
 *   peak RSS while it ran, sampled from /proc (target: under 300 MiB).
 * - One PDF of a 50-line statement, rendered BENCH_RENDERS times (default 50) in this process:
 *   p50 render time (target: under 50 ms) and its size, for a Latin name and for one in
 *   Latin, Cyrillic and Chinese.
 *
 * Environment: DATABASE_URL (a server where a scratch database may be created), REDIS_URL.
 */
import { readFileSync } from 'node:fs';
import { sql } from 'slonik';
import { createInstitution } from '../common/institutions.js';
import { statementPdf } from '../common/resources/givingStatements/document.js';
import type { GivingStatementResponse } from '../common/resources/givingStatements/response.js';
import { freePort, nodeOptionsOf, until } from './processes.js';
import { convertAtPar, insertBenchRecords, withBenchStack } from './stack.js';

const donors = Number(process.env.BENCH_DONORS ?? 10_000);
const renders = Number(process.env.BENCH_RENDERS ?? 50);

/** A process's resident set, in MiB (Linux). */
function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return kb / 1024;
}

function statementOf(name: string): GivingStatementResponse {
  return {
    id: 1,
    object: 'giving_statement',
    number: '2025-1',
    donor_id: 1,
    year: 2025,
    period: 'calendar',
    period_start: '2025-01-01',
    period_end: '2025-12-31',
    status: 'issued',
    superseded_by_id: null,
    run_id: null,
    donor_name: name,
    donor_address: {
      line1: '14 Beacon Street',
      line2: null,
      city: 'Boston',
      region: 'MA',
      postal_code: '02108',
      country: 'US',
    },
    currency: 'USD',
    lines: Array.from({ length: 50 }, (_, index) => ({
      gift_id: 1000 + index,
      gift_date: `2025-${String((index % 12) + 1).padStart(2, '0')}-15`,
      receipt_number: index % 3 === 0 ? null : 500 + index,
      currency: 'USD',
      amount: 1250.5,
      benefit_amount: 50,
      deductible_amount: 1200.5,
    })),
    totals: [{ currency: 'USD', amount: 62525, deductible_amount: 60025 }],
    base_total: 62525,
    issued_on: '2026-01-05',
    created_at: '2026-01-05T09:00:00.000Z',
    updated_at: '2026-01-05T09:00:00.000Z',
  };
}

async function renderFigures(name: string) {
  const statement = statementOf(name);
  const size = (await statementPdf(statement, 'Northbridge University')).length;
  const times: number[] = [];
  for (let index = 0; index < renders; index += 1) {
    const started = performance.now();
    await statementPdf(statement, 'Northbridge University');
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return { p50: times[Math.floor(times.length / 2)]!, size };
}

async function main(): Promise<void> {
  await withBenchStack('statements', async ({ pool, spawn }) => {
    const { institution, apiKey } = await createInstitution(pool, 'Statement University', 'USD');
    const id = institution.id;
    const { donorIds } = await insertBenchRecords(pool, id, { donors, funds: 0 });
    await pool.query(sql.unsafe`
      INSERT INTO gifts (institution_id, donor_id, amount, currency, subject, gift_date, type)
      SELECT ${id}, d, 50 + (d % 100), 'USD', 'Seeded', DATE '2025-01-01' + (d % 300)::int + k * 30,
             'cash'
      FROM unnest(${sql.array(donorIds, 'int8')}) AS d, generate_series(0, 1) AS k`);
    await convertAtPar(pool, id);
    await pool.query(sql.unsafe`SELECT giving_months_rebuild(${id})`);

    const port = await freePort();
    spawn('api/main.js', { PORT: String(port) });
    // The worker as `npm run start:worker` starts it (its heap cap): its memory is the figure.
    const worker = spawn('worker/main.js', {
      NODE_OPTIONS: await nodeOptionsOf('start:worker', 'worker/main.js'),
    });
    const base = `http://127.0.0.1:${port}/api/v1`;
    const headers = { 'X-Service-API-Key': apiKey.key, 'Content-Type': 'application/json' };
    let runId = 0;
    await until('the API and a worker', async () => {
      const response = await fetch(`${base}/giving-statement-runs`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ year: 2025 }),
      });
      if (response.status !== 202) return false;
      runId = ((await response.json()) as { id: number }).id;
      return true;
    });
    const atStart = rssMiB(worker.pid!);
    const started = performance.now();
    let peak = 0;
    let done = { status: 'queued', donors_done: 0, donors_total: 0 };
    while (done.status !== 'completed' && done.status !== 'failed') {
      peak = Math.max(peak, rssMiB(worker.pid!));
      await new Promise((resolve) => setTimeout(resolve, 100));
      done = (await (
        await fetch(`${base}/giving-statement-runs/${runId}`, { headers })
      ).json()) as typeof done;
    }
    const seconds = (performance.now() - started) / 1000;

    const latin = await renderFigures('Ada Lovelace');
    const scripts = await renderFigures('Zoë Groß-Łukasiewicz Жуков 李小龙');
    console.log(`giving statement run of ${done.donors_done} donors (${done.status})`);
    console.log(`  statements per second  ${(done.donors_done / seconds).toFixed(0)}`);
    console.log(`  time                   ${seconds.toFixed(1)} s`);
    console.log(
      `  worker peak RSS        ${peak.toFixed(0)} MiB (target: under 300 MiB), ${atStart.toFixed(0)} MiB as the run began`,
    );
    console.log(`one PDF of a 50-line statement (${renders} renders)`);
    console.log(
      `  Latin name             p50 ${latin.p50.toFixed(1)} ms, ${(latin.size / 1024).toFixed(0)} KiB (target: under 50 ms)`,
    );
    console.log(
      `  Latin, Cyrillic, CJK   p50 ${scripts.p50.toFixed(1)} ms, ${(scripts.size / 1024).toFixed(0)} KiB`,
    );
  });
}

await main();
