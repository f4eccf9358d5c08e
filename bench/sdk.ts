/**
 * `npm run bench:sdk`: what the client library (sdk/) costs over a bare `fetch`. The same
 * `GET /gifts/{id}` BENCH_CALLS times (default 10,000) through `client.gifts.retrieve` and through
 * `fetch` with the same headers and a JSON parse, BENCH_CONCURRENCY at a time (default 10),
 * alternated over BENCH_ROUNDS rounds (default 6, which goes first flipping each round, so that
 * neither gains from the order) against one API process and one worker
 * (target: the client at least 0.95x the throughput of fetch). First, without the network, the
 * client's own CPU per call.
 *
 * Environment: DATABASE_URL (a server where a scratch database may be created), REDIS_URL.
 */
import { createInstitution } from '../common/institutions.js';
import { DonorGift } from '../sdk/src/index.js';
import { cpuSecondsOf } from './cpuTime.js';
import { freePort, until } from './processes.js';
import { withBenchStack } from './stack.js';

const calls = Number(process.env.BENCH_CALLS ?? 10_000);
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 10);
const rounds = Number(process.env.BENCH_ROUNDS ?? 6);

interface Phase {
  perSecond: number;
  /** CPU per call, in microseconds, of this process (the caller) and of the API process. */
  callerCpu: number;
  apiCpu: number;
}

/** Runs `call` `calls` times, `concurrency` at a time: calls per second and CPU per call. */
async function timed(call: () => Promise<unknown>, apiPid: number): Promise<Phase> {
  let issued = 0;
  const apiBefore = (await cpuSecondsOf(apiPid)) ?? Number.NaN;
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (issued < calls) {
        issued++;
        await call();
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  const apiAfter = (await cpuSecondsOf(apiPid)) ?? Number.NaN;
  return {
    perSecond: calls / seconds,
    callerCpu: (cpu.user + cpu.system) / calls,
    apiCpu: ((apiAfter - apiBefore) * 1e6) / calls,
  };
}

/**
 * The client's own CPU per call, without the network: a retrieve through the client with a fetch
 * that answers at once, against the same answer read and parsed directly. Microseconds per call.
 */
async function ownCost(): Promise<{ direct: number; client: number }> {
  const text = JSON.stringify({ id: 7, object: 'gift', amount: 25, subject: 'Annual fund' });
  const headers = new Headers({ 'Request-Id': 'req_0123456789abcdef01234567' });
  const answer = async () => ({ status: 200, headers, text: async () => text });
  const client = new DonorGift({
    apiKey: 'dgs_key_x',
    baseUrl: 'http://127.0.0.1:1',
    fetch: answer,
  });
  const n = 100_000;
  let started = performance.now();
  for (let i = 0; i < n; i++) {
    const response = await answer();
    AbortSignal.timeout(30_000);
    JSON.parse(await response.text());
  }
  const direct = ((performance.now() - started) / n) * 1000;
  started = performance.now();
  for (let i = 0; i < n; i++) await client.gifts.retrieve(7);
  return { direct, client: ((performance.now() - started) / n) * 1000 };
}

async function main(): Promise<void> {
  const own = await ownCost();
  console.log(
    `The client's own cost, no network: ${own.client.toFixed(1)} µs a call against ${own.direct.toFixed(1)} µs for the bare read and parse.`,
  );
  await withBenchStack('sdk', async ({ pool, spawn }) => {
    const { apiKey } = await createInstitution(pool, 'Benchmark University', 'USD');
    const port = await freePort();
    const api = spawn('api/main.js', { PORT: String(port) });
    spawn('worker/main.js');
    const apiPid = api.pid!;
    const baseUrl = `http://127.0.0.1:${port}`;
    const client = new DonorGift({ apiKey: apiKey.key, baseUrl });
    let giftId = 0;
    await until('the API and a worker', async () => {
      const donor = await client.donors.create(
        { role: 'Individual', first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.org' },
        { idempotencyKey: 'bench-donor', maxRetries: 0 },
      );
      const gift = await client.gifts.create(
        { donor_id: donor.id, amount: 25, subject: 'Annual fund', gift_date: '2026-01-01' },
        { idempotencyKey: 'bench-gift', maxRetries: 0 },
      );
      giftId = gift.id;
      return true;
    });
    const url = `${baseUrl}/api/v1/gifts/${giftId}`;
    const headers = { Accept: 'application/json', 'X-Service-API-Key': apiKey.key };
    const direct = async () => {
      const response = await fetch(url, { headers, signal: AbortSignal.timeout(30_000) });
      if (response.status !== 200) throw new Error(`fetch: ${response.status}`);
      return JSON.parse(await response.text()) as unknown;
    };
    const throughClient = () => client.gifts.retrieve(giftId);

    await timed(direct, apiPid);
    await timed(throughClient, apiPid);
    const results: { fetch: Phase; client: Phase }[] = [];
    // Alternated, the first of each round flipping: the load drifts within a run, and the second
    // of two back-to-back phases meets what the first left (garbage, dead rows, a warm cache).
    for (let round = 0; round < rounds; round++) {
      if (round % 2 === 0) {
        const fetched = await timed(direct, apiPid);
        results.push({ fetch: fetched, client: await timed(throughClient, apiPid) });
      } else {
        const client = await timed(throughClient, apiPid);
        results.push({ fetch: await timed(direct, apiPid), client });
      }
    }

    console.log(`\n${calls} GET /gifts/{id}, ${concurrency} at a time, per round:\n`);
    console.log(
      '| round | fetch calls/s | client calls/s | client / fetch | caller CPU µs/call, fetch · client | API CPU µs/call, fetch · client |',
    );
    console.log('| ----- | ------------- | -------------- | -------------- | --- | --- |');
    results.forEach((r, i) =>
      console.log(
        `| ${i + 1} | ${r.fetch.perSecond.toFixed(0)} | ${r.client.perSecond.toFixed(0)} | ${(r.client.perSecond / r.fetch.perSecond).toFixed(2)}x | ${r.fetch.callerCpu.toFixed(0)} · ${r.client.callerCpu.toFixed(0)} | ${r.fetch.apiCpu.toFixed(0)} · ${r.client.apiCpu.toFixed(0)} |`,
      ),
    );
    const sum = (key: 'fetch' | 'client') =>
      results.reduce((total, r) => total + r[key].perSecond, 0);
    const ratio = sum('client') / sum('fetch');
    console.log(
      `\nOverall: ${ratio.toFixed(2)}x (target at least 0.95x: ${ratio >= 0.95 ? 'met' : 'not met'})`,
    );
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
