/**
 * `npm run bench:imports`: imports through the API and two worker processes, beside a bare COPY.
 *
 * - a CSV of BENCH_IMPORT_ROWS gift rows (default 100,000), each split over two funds
 *   (`designations` `F1:6.00;F2:4.50`), donors named by id;
 * - a bare `COPY` of the same rows into an unindexed table (the floor of getting rows in);
 * - the dry run: upload to `validated`, rows/s (target ≥ 10,000);
 * - the import: upload to `completed`, rows/s end to end (target ≥ 5,000);
 * - a 50 MiB upload (dry run) to two fresh workers (no heap left from the phases before),
 *   sampling the resident memory of the API and of each worker every 200 ms while it uploads and
 *   for BENCH_RSS_SECONDS after (target < 300 MiB each), then cancelled.
 *
 * BENCH_IMPORT_PHASES (default `dry,import,memory`) picks phases for quick iterations;
 * BENCH_WORKER_NODE_OPTIONS starts the workers with these Node options (`--cpu-prof
 * --cpu-prof-dir=/tmp/prof` to profile them).
 *
 * Prints a table; exit status 0 whatever the figures (the machine is shared: compare runs).
 */
import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { createInstitution } from '../common/institutions.js';
import { freePort, nodeOptionsOf, stop, until } from './processes.js';
import { insertBenchRecords, withBenchStack } from './stack.js';

const ROWS = Number(process.env.BENCH_IMPORT_ROWS ?? 100_000);
const RSS_SECONDS = Number(process.env.BENCH_RSS_SECONDS ?? 15);
const BIG_BYTES = 50 * 1024 * 1024;
const PHASES = new Set((process.env.BENCH_IMPORT_PHASES ?? 'dry,import,memory').split(','));
const WORKER_NODE_OPTIONS = process.env.BENCH_WORKER_NODE_OPTIONS;

interface Figure {
  phase: string;
  rows: number;
  seconds: number;
  note: string;
}

async function rssMb(pid: number | undefined): Promise<number> {
  if (pid === undefined) return Number.NaN;
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  return Number(/^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1] ?? Number.NaN) / 1024;
}

const header = 'donor_id,amount,gift_date,subject,designations\n';

/** Gift rows of the fixture donors; `pad` lengthens the subject (for the 50 MiB file). */
function giftLine(index: number, donorIds: number[], pad = ''): string {
  const donor = donorIds[index % donorIds.length]!;
  return `${donor},10.50,2026-03-01,Import ${index}${pad},F1:6.00;F2:4.50\n`;
}

async function writeCsv(file: string, rows: number, donorIds: number[], pad = ''): Promise<void> {
  const parts: string[] = [header];
  for (let index = 0; index < rows; index += 1) parts.push(giftLine(index, donorIds, pad));
  await writeFile(file, parts.join(''));
}

await withBenchStack('imports', async (stack) => {
  const { institution, apiKey } = await createInstitution(stack.pool, 'Import University', 'USD');
  const { donorIds } = await insertBenchRecords(stack.pool, institution.id, {
    donors: 1_000,
    funds: 2,
  });
  const dir = await mkdtemp(path.join(tmpdir(), 'dgs-bench-imports-'));
  const port = await freePort();
  const apiUrl = `http://127.0.0.1:${port}`;
  const env = {
    PORT: String(port),
    IMPORT_MAX_ROWS: String(Math.max(ROWS, 1_000_000)),
    IMPORT_MAX_BYTES: String(BIG_BYTES + 1024 * 1024),
  };
  // The API and workers start with the Node options of `npm start` and `npm run start:worker`
  // (their heap caps), the workers with any the bench adds.
  const api = stack.spawn('api/main.js', {
    ...env,
    NODE_OPTIONS: await nodeOptionsOf('start', 'api/main.js'),
  });
  const workerEnv = {
    ...env,
    NODE_OPTIONS: [await nodeOptionsOf('start:worker', 'worker/main.js'), WORKER_NODE_OPTIONS ?? '']
      .join(' ')
      .trim(),
  };
  const startWorkers = () => [
    stack.spawn('worker/main.js', workerEnv),
    stack.spawn('worker/main.js', workerEnv),
  ];
  let workers = startWorkers();
  await until('the API and workers', async () => (await fetch(`${apiUrl}/ready`)).ok);
  const figures: Figure[] = [];
  try {
    const csv = path.join(dir, 'gifts.csv');
    await writeCsv(csv, ROWS, donorIds);
    const bytes = (await stat(csv)).size;

    // The floor: the same rows into an unindexed table, with COPY.
    const client = new pg.Client({ connectionString: stack.databaseUrl });
    await client.connect();
    await client.query(`CREATE UNLOGGED TABLE bench_copy (donor_id bigint, amount numeric,
      gift_date date, subject text, designations text)`);
    let started = performance.now();
    await pipeline(
      createReadStream(csv),
      client.query(copyFrom('COPY bench_copy FROM STDIN WITH (FORMAT csv, HEADER true)')),
    );
    figures.push({
      phase: 'bare COPY, unindexed table',
      rows: ROWS,
      seconds: (performance.now() - started) / 1000,
      note: `${(bytes / 1024 / 1024).toFixed(1)} MiB`,
    });
    await client.end();

    const call = async (
      method: string,
      route: string,
      body?: string | ReadableStream,
      type = 'text/csv',
    ) => {
      const response = await fetch(`${apiUrl}/api/v1${route}`, {
        method,
        headers: {
          'X-Service-API-Key': apiKey.key,
          ...(body
            ? { 'Content-Type': type, 'Idempotency-Key': randomBytes(8).toString('hex') }
            : {}),
        },
        ...(body ? { body, duplex: 'half' } : {}),
      } as RequestInit);
      const answer = (await response.json()) as { id: number; status: string; rows_failed: number };
      if (!response.ok)
        throw new Error(`${method} ${route}: ${response.status} ${JSON.stringify(answer)}`);
      return answer;
    };
    const upload = (file: string, query: string) =>
      call(
        'POST',
        `/imports?resource=gifts${query}`,
        Readable.toWeb(createReadStream(file)) as ReadableStream,
      );
    const statusTimes = () =>
      [...seen].map(([status, at]) => `${status} at ${at.toFixed(1)} s`).join(', ');
    /** When each status was first seen, in seconds since `started`: where the time went. */
    let seen = new Map<string, number>();
    const until = async (id: number, status: string) => {
      seen = new Map();
      for (;;) {
        const now = await call('GET', `/imports/${id}`);
        if (!seen.has(now.status)) seen.set(now.status, (performance.now() - started) / 1000);
        if (now.status === status) return now;
        if (['failed', 'cancelled', 'completed', 'validated'].includes(now.status))
          throw new Error(`import ${id} ended ${now.status}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };

    if (PHASES.has('dry')) {
      started = performance.now();
      const dry = await upload(csv, '&dry_run=true');
      const validated = await until(dry.id, 'validated');
      figures.push({
        phase: 'dry run: upload to validated',
        rows: ROWS,
        seconds: (performance.now() - started) / 1000,
        note: `target ≥ 10,000 rows/s; ${validated.rows_failed} failed; ${statusTimes()}`,
      });
    }

    if (PHASES.has('import')) {
      started = performance.now();
      const real = await upload(csv, '');
      const completed = await until(real.id, 'completed');
      const importSeconds = (performance.now() - started) / 1000;
      figures.push({
        phase: 'import: upload to completed',
        rows: ROWS,
        seconds: importSeconds,
        note: `target ≥ 5,000 rows/s; ${completed.rows_failed} failed; ${(importSeconds / figures[0]!.seconds).toFixed(1)}× the bare COPY; ${statusTimes()}`,
      });
    }

    if (PHASES.has('memory')) {
      // Fresh workers: the figure is the 50 MiB import's own, not heap left by the phases before.
      await Promise.all(workers.map(stop));
      workers = startWorkers();
      await new Promise((resolve) => setTimeout(resolve, 2_000));

      // Memory during a 50 MiB upload and the judging after it.
      const big = path.join(dir, 'big.csv');
      const pad = ' '.repeat(60);
      const perRow = Buffer.byteLength(giftLine(999_999, donorIds, pad));
      await writeCsv(big, Math.floor((BIG_BYTES - header.length) / perRow), donorIds, pad);
      const idle = Math.max(...(await Promise.all(workers.map((worker) => rssMb(worker.pid)))));
      const peak = { api: 0, workers: 0 };
      const sample = async () => {
        peak.api = Math.max(peak.api, await rssMb(api.pid));
        for (const worker of workers)
          peak.workers = Math.max(peak.workers, await rssMb(worker.pid));
      };
      const sampler = setInterval(() => void sample(), 200);
      started = performance.now();
      const bigImport = await upload(big, '&dry_run=true');
      const uploadSeconds = (performance.now() - started) / 1000;
      await new Promise((resolve) => setTimeout(resolve, RSS_SECONDS * 1000));
      clearInterval(sampler);
      await call('POST', `/imports/${bigImport.id}/cancel`, '{}', 'application/json');
      figures.push({
        phase: `50 MiB upload (${((await stat(big)).size / 1024 / 1024).toFixed(1)} MiB)`,
        rows: 0,
        seconds: uploadSeconds,
        note: `peak RSS: API ${peak.api.toFixed(0)} MiB, workers ${peak.workers.toFixed(0)} MiB (${idle.toFixed(0)} idle; target < 300 each)`,
      });
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }

  console.log(`\nImports: ${ROWS} gift rows with designations, API + 2 workers\n`);
  console.log('phase'.padEnd(36), 'seconds'.padStart(9), 'rows/s'.padStart(9), ' note');
  for (const figure of figures)
    console.log(
      figure.phase.padEnd(36),
      figure.seconds.toFixed(2).padStart(9),
      (figure.rows ? (figure.rows / figure.seconds).toFixed(0) : '-').padStart(9),
      '',
      figure.note,
    );
});
