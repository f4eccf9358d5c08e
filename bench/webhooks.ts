/**
 * `npm run bench:webhooks`: what webhooks cost the write path, and how fast they go out.
 *
 * 1. Gift creates through the API and one worker process with events on and no webhook
 *    endpoint, next to the same with one enabled endpoint matching every event (a local receiver
 *    answering 204), in the same run (target: the deliveries cost at most 15% of the write
 *    throughput, a ratio of at least 0.85); the bare Express + pg insert for reference.
 * 2. 10,000 events (copies of a real `gift.created`) committed to the outbox in batches of 500,
 *    delivered by that worker to the receiver: deliveries per second, and p50/p99 from each
 *    event's `created_at` (its commit) to the receiver's receipt.
 *
 * The receiver runs in this process, next to the load generator. Where /proc is readable it also
 * prints the CPU each write cost each process in the two API phases.
 *
 * With BENCH_BEFORE_DIST (the `dist` directory of an earlier build, such as a copy made before a
 * change), both steps run first with that build's worker, then with this one's, against the same
 * API process, database and receiver: before and after, side by side under the same load. The
 * burst also prints the CPU each delivery cost the worker, Postgres and Redis.
 *
 * Environment: DATABASE_URL (a server where a scratch database may be created), REDIS_URL,
 * BENCH_SECONDS (per phase, default 10), BENCH_CONNECTIONS (default 50), BENCH_EVENTS (default
 * 10000), BENCH_BEFORE_DIST (unset: this build only).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { createInstitution } from '../common/institutions.js';
import { createRedis } from '../common/redis.js';
import { cpuPerRequest, readCpu } from './cpuTime.js';
import { freePort, stop, until } from './processes.js';
import { printPhases, runPhase, type Phase } from './phases.js';
import { insertBenchRecords, redisUrl, withBenchStack } from './stack.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
const eventCount = Number(process.env.BENCH_EVENTS ?? 10_000);
const BATCH = 500;
const beforeDist = process.env.BENCH_BEFORE_DIST;

/** The worker builds measured, each with the same API process, database and receiver. */
const variants = [
  ...(beforeDist
    ? [{ label: 'before', workerEntry: path.resolve(beforeDist, 'worker/main.js') }]
    : []),
  { label: beforeDist ? 'after' : 'this build', workerEntry: 'worker/main.js' },
];

interface VariantResult {
  label: string;
  phases: [Phase, Phase];
  /** CPU ms per write, by phase and process group. */
  cpu: Record<string, Record<string, number>>;
  /** CPU ms per delivery of the burst, by process group. */
  burstCpu: Record<string, number> | undefined;
  underLoad: {
    madeDuring: number;
    deliveredDuring: number;
    drainedIn: number;
    latencies: number[];
  };
  burst: { committedIn: number; perSecond: number; latencies: number[]; repeats: number };
}

/** A receiver answering 204 to everything, noting when each webhook-id first arrived. */
async function startReceiver() {
  const receivedAt = new Map<string, number>();
  let requests = 0;
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      requests += 1;
      const id = String(request.headers['webhook-id']);
      if (!receivedAt.has(id)) receivedAt.set(id, Date.now());
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `http://127.0.0.1:${port}/hook`,
    receivedAt,
    requests: () => requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const percentile = (sorted: readonly number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;

/** Milliseconds from each event's commit (`created_at`) to its receipt, sorted. */
async function latenciesOf(
  pool: DatabasePool,
  receivedAt: ReadonlyMap<string, number>,
  which: ReturnType<typeof sql.fragment>,
): Promise<number[]> {
  const events = await pool.any(sql.type(z.object({ id: z.string(), at: z.number() }))`
    SELECT id, (extract(epoch FROM created_at) * 1000)::float8 AS at FROM events WHERE ${which}`);
  return events
    .filter((event) => receivedAt.has(event.id))
    .map((event) => receivedAt.get(event.id)! - event.at)
    .sort((a, b) => a - b);
}

/** A row per process group and the total, of CPU ms per write or per delivery. */
function printCpu(title: string, rows: [string, Record<string, number>][]): void {
  if (!rows.length) return;
  const groups = Object.keys(rows[0]![1]);
  console.log(`\n${title}\n`);
  console.log(
    ['phase'.padEnd(46), ...groups.map((g) => g.padStart(10)), 'total'.padStart(8)].join(' '),
  );
  for (const [name, row] of rows)
    console.log(
      [
        name.padEnd(46),
        ...groups.map((group) => (row[group] ?? 0).toFixed(2).padStart(Math.max(10, group.length))),
        Object.values(row)
          .reduce((sum, ms) => sum + ms, 0)
          .toFixed(2)
          .padStart(8),
      ].join(' '),
    );
}

function printResults(phases: Phase[], results: VariantResult[]): void {
  printPhases(`Webhook benchmark (${seconds} s per phase, ${connections} connections)`, phases);
  printCpu(
    'CPU ms per write, by process',
    results.flatMap((result) => Object.entries(result.cpu)),
  );
  printCpu(
    `CPU ms per delivery, burst of ${eventCount} (Postgres includes committing the events)`,
    results.flatMap((result) =>
      result.burstCpu ? [[result.label, result.burstCpu] as [string, Record<string, number>]] : [],
    ),
  );
  for (const {
    label,
    phases: [without, withEndpoint],
    underLoad,
    burst,
  } of results) {
    const ratio = withEndpoint.perSecond / without.perSecond;
    console.log(
      `\n${label}: with an endpoint / without: ${ratio.toFixed(2)}x (target ≥ 0.85x, deliveries ` +
        `cost ≤ 15%: ${ratio >= 0.85 ? 'met' : 'missed'})`,
    );
    console.log(
      `${label}: during the endpoint phase: ${underLoad.madeDuring} deliveries made, ` +
        `${underLoad.deliveredDuring} received (${(underLoad.deliveredDuring / seconds).toFixed(0)}/s); ` +
        `backlog drained ${(underLoad.drainedIn / 1000).toFixed(1)} s after; commit to receipt ` +
        `p50 ${percentile(underLoad.latencies, 50)} ms, p99 ${percentile(underLoad.latencies, 99)} ms`,
    );
    console.log(
      `${label}: delivery of ${eventCount} events committed in ` +
        `${(burst.committedIn / 1000).toFixed(1)} s (batches of ${BATCH}): ` +
        `${burst.perSecond.toFixed(0)} deliveries/s; commit to receipt p50 ` +
        `${percentile(burst.latencies, 50)} ms, p99 ${percentile(burst.latencies, 99)} ms, max ` +
        `${burst.latencies.at(-1)} ms; ${burst.repeats} repeats`,
    );
  }
}

const countOf = (pool: DatabasePool, query: ReturnType<typeof sql.unsafe>) =>
  pool.oneFirst(query).then(Number);

async function main(): Promise<void> {
  const receiver = await startReceiver();
  try {
    await withBenchStack('webhooks', async ({ pool, spawn }) => {
      const { institution, apiKey } = await createInstitution(pool, 'Benchmark University', 'USD');
      const id = institution.id;
      const { donorIds } = await insertBenchRecords(pool, id, { donors: 1, funds: 0 });
      const gift = JSON.stringify({
        donor_id: donorIds[0],
        amount: 25.5,
        subject: 'Benchmark gift',
        gift_date: '2026-11-21',
      });
      const phases: Phase[] = [];

      const basePort = await freePort();
      const baseline = spawn('bench/baselineServer.js', {
        PORT: String(basePort),
        BENCH_INSTITUTION_ID: String(id),
      });
      const baseUrl = `http://127.0.0.1:${basePort}/gifts`;
      await until('the baseline server', async () => {
        const response = await fetch(baseUrl, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: gift,
        });
        return response.status === 201;
      });
      phases.push(
        await runPhase('baseline: express + pg insert', {
          url: baseUrl,
          method: 'POST',
          headers: {},
          body: gift,
          connections,
          seconds,
        }),
      );
      await stop(baseline);

      const port = await freePort();
      const webhookEnv = { WEBHOOK_ALLOWED_HOSTS: `127.0.0.1:${receiver.port}` };
      const api = spawn('api/main.js', { ...webhookEnv, PORT: String(port) });
      const base = `http://127.0.0.1:${port}/api/v1`;
      const auth = { 'X-Service-API-Key': apiKey.key };
      const send = (method: string, path: string, body?: string) =>
        fetch(`${base}${path}`, {
          method,
          headers: { ...auth, 'Content-Type': 'application/json' },
          ...(body === undefined ? {} : { body }),
        });
      const creates = {
        url: `${base}/gifts`,
        method: 'POST' as const,
        headers: auth,
        body: gift,
        keyed: true,
        connections,
        seconds,
      };
      const redisInfo = createRedis(redisUrl, 'blocking');
      const redisPid = ['127.0.0.1', 'localhost'].includes(new URL(redisUrl).hostname)
        ? Number(/process_id:(\d+)/.exec(await redisInfo.info('server'))?.[1] ?? 0)
        : 0;
      redisInfo.disconnect();
      const postgresPids = async () =>
        (
          await pool.anyFirst(sql.type(z.object({ pid: z.number() }))`
            SELECT pid FROM pg_stat_activity
            WHERE datname = current_database() AND pid <> pg_backend_pid()`)
        ).map(Number);

      const results: VariantResult[] = [];
      for (const variant of variants) {
        const worker = spawn(variant.workerEntry, webhookEnv);
        await until(
          `the API and the ${variant.label} worker`,
          async () => (await send('POST', '/gifts', gift)).status === 201,
        );
        const processGroups = async () => ({
          API: [api.pid ?? 0],
          worker: [worker.pid ?? 0],
          Postgres: await postgresPids(),
          Redis: redisPid ? [redisPid] : [],
          'load generator + receiver': [process.pid],
        });
        const cpu: Record<string, Record<string, number>> = {};
        /** A phase, with the CPU per request of each process group where /proc tells. */
        const measured = async (name: string) => {
          const before = await readCpu(await processGroups());
          const phase = await runPhase(name, creates);
          const after = await readCpu(await processGroups());
          if (before && after) cpu[name] = cpuPerRequest(before, after, phase.perSecond * seconds);
          return phase;
        };
        const prefix = variants.length > 1 ? `${variant.label}: ` : '';
        // Unmeasured: the processes' code warmed up (JIT) before each build's first phase.
        await runPhase(`${prefix}warm-up`, { ...creates, seconds: Math.min(3, seconds) });
        const without = await measured(`${prefix}gift create, events, no endpoint`);

        const endpoint = await send(
          'POST',
          '/webhook-endpoints',
          JSON.stringify({ url: receiver.url, enabled_events: ['*'] }),
        );
        if (endpoint.status !== 201) throw new Error(`endpoint not created: ${endpoint.status}`);
        const endpointId = ((await endpoint.json()) as { id: number }).id;
        const before = receiver.receivedAt.size;
        const withEndpoint = await measured(`${prefix}gift create, 1 endpoint (all events)`);
        const deliveredDuring = receiver.receivedAt.size - before;
        const madeDuring = await countOf(
          pool,
          sql.unsafe`SELECT count(*) FROM webhook_deliveries WHERE endpoint_id = ${endpointId}`,
        );

        // The backlog of the write phase goes out before the delivery phase starts: every event
        // since the endpoint was made has its delivery, and none is pending.
        const backlog = sql.unsafe`
          SELECT (SELECT count(*) FROM events
                  WHERE created_at >= (SELECT created_at FROM webhook_endpoints
                                       WHERE id = ${endpointId}))
               - (SELECT count(*) FROM webhook_deliveries
                  WHERE endpoint_id = ${endpointId} AND status = 'delivered')`;
        const drainStarted = Date.now();
        while ((await countOf(pool, backlog)) > 0) {
          if (Date.now() - drainStarted > 300_000) throw new Error('the backlog did not drain');
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
        const drainedIn = Date.now() - drainStarted;
        const underLoad = await latenciesOf(
          pool,
          receiver.receivedAt,
          sql.fragment`created_at >= (SELECT created_at FROM webhook_endpoints
                                      WHERE id = ${endpointId})`,
        );

        // Copies of a real gift.created event, committed straight to the outbox in batches.
        const template = await pool.one(sql.type(
          z.object({ object_id: z.number(), data: z.unknown(), api_key_id: z.string() }),
        )`
          SELECT object_id, data, api_key_id FROM events
          WHERE institution_id = ${id} AND type = 'gift.created' ORDER BY seq LIMIT 1`);
        const requestsBefore = receiver.requests() - receiver.receivedAt.size;
        const cpuBefore = await readCpu(await processGroups());
        const startedAt = Date.now();
        const insertedIds: string[] = [];
        for (let done = 0; done < eventCount; done += BATCH) {
          const ids = await pool.anyFirst(sql.type(z.object({ id: z.string() }))`
            INSERT INTO events (institution_id, type, object_type, object_id, data, request_id,
                                api_key_id)
            SELECT ${id}, 'gift.created', 'gift', ${template.object_id},
                   ${JSON.stringify(template.data)}::json, 'req_bench_' || n,
                   ${template.api_key_id}
            FROM generate_series(1, ${Math.min(BATCH, eventCount - done)}::int) AS n
            RETURNING id`);
          insertedIds.push(...ids);
        }
        const committedIn = Date.now() - startedAt;
        while (insertedIds.some((eventId) => !receiver.receivedAt.has(eventId))) {
          if (Date.now() - startedAt > 600_000) throw new Error('the events were not delivered');
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        const cpuAfter = await readCpu(await processGroups());
        const latencies = await latenciesOf(
          pool,
          receiver.receivedAt,
          sql.fragment`id = ANY(${sql.array(insertedIds, 'text')})`,
        );
        const firstCommit = Number(
          await pool.oneFirst(sql.unsafe`
            SELECT (extract(epoch FROM min(created_at)) * 1000)::float8 FROM events
            WHERE id = ANY(${sql.array(insertedIds, 'text')})`),
        );
        const lastReceipt = Math.max(
          ...insertedIds.map((eventId) => receiver.receivedAt.get(eventId)!),
        );
        results.push({
          label: variant.label,
          phases: [without, withEndpoint],
          cpu,
          burstCpu:
            cpuBefore && cpuAfter ? cpuPerRequest(cpuBefore, cpuAfter, eventCount) : undefined,
          underLoad: { madeDuring, deliveredDuring, drainedIn, latencies: underLoad },
          burst: {
            committedIn,
            perSecond: (eventCount / (lastReceipt - firstCommit)) * 1000,
            latencies,
            repeats: receiver.requests() - receiver.receivedAt.size - requestsBefore,
          },
        });
        // The next worker starts from no endpoint, as this one did.
        const removed = await send('DELETE', `/webhook-endpoints/${endpointId}`);
        if (removed.status !== 200) throw new Error(`endpoint not deleted: ${removed.status}`);
        await stop(worker);
        // The deleted rows are vacuumed here, unmeasured, not during the next build's phases.
        await pool.query(sql.unsafe`VACUUM ANALYZE`);
      }
      phases.push(...results.flatMap((result) => result.phases));
      printResults(phases, results);
    });
  } finally {
    await receiver.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
