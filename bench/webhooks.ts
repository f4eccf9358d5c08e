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
 * Environment: DATABASE_URL (a server where a scratch database may be created), REDIS_URL,
 * BENCH_SECONDS (per phase, default 10), BENCH_CONNECTIONS (default 50), BENCH_EVENTS (default
 * 10000).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
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
      const worker = spawn('worker/main.js', webhookEnv);
      const base = `http://127.0.0.1:${port}/api/v1`;
      const auth = { 'X-Service-API-Key': apiKey.key };
      const post = (path: string, body: string) =>
        fetch(`${base}${path}`, {
          method: 'POST',
          headers: { ...auth, 'Content-Type': 'application/json' },
          body,
        });
      await until('the API and a worker', async () => (await post('/gifts', gift)).status === 201);
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
      const processGroups = async () => ({
        API: [api.pid ?? 0],
        worker: [worker.pid ?? 0],
        Postgres: (
          await pool.anyFirst(sql.type(z.object({ pid: z.number() }))`
            SELECT pid FROM pg_stat_activity
            WHERE datname = current_database() AND pid <> pg_backend_pid()`)
        ).map(Number),
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
      phases.push(await measured('gift create, events, no endpoint'));

      const endpoint = await post(
        '/webhook-endpoints',
        JSON.stringify({ url: receiver.url, enabled_events: ['*'] }),
      );
      if (endpoint.status !== 201) throw new Error(`endpoint not created: ${endpoint.status}`);
      const before = receiver.receivedAt.size;
      phases.push(await measured('gift create, 1 endpoint (all events)'));
      const deliveredDuring = receiver.receivedAt.size - before;
      const madeDuring = await countOf(pool, sql.unsafe`SELECT count(*) FROM webhook_deliveries`);

      // The backlog of the write phase goes out before the delivery phase starts: every event
      // since the endpoint was made has its delivery, and none is pending.
      const backlog = sql.unsafe`
        SELECT (SELECT count(*) FROM events
                WHERE created_at >= (SELECT min(created_at) FROM webhook_endpoints))
             - (SELECT count(*) FROM webhook_deliveries WHERE status = 'delivered')`;
      const drainStarted = Date.now();
      while ((await countOf(pool, backlog)) > 0) {
        if (Date.now() - drainStarted > 300_000) throw new Error('the backlog did not drain');
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      const drainedIn = Date.now() - drainStarted;
      const underLoad = await latenciesOf(
        pool,
        receiver.receivedAt,
        sql.fragment`created_at >= (SELECT min(created_at) FROM webhook_endpoints)`,
      );

      // Copies of a real gift.created event, committed straight to the outbox in batches.
      const template = await pool.one(sql.type(
        z.object({ object_id: z.number(), data: z.unknown(), api_key_id: z.string() }),
      )`
        SELECT object_id, data, api_key_id FROM events
        WHERE institution_id = ${id} AND type = 'gift.created' ORDER BY seq LIMIT 1`);
      const startedAt = Date.now();
      const insertedIds: string[] = [];
      for (let done = 0; done < eventCount; done += BATCH) {
        const ids = await pool.anyFirst(sql.type(z.object({ id: z.string() }))`
          INSERT INTO events (institution_id, type, object_type, object_id, data, request_id,
                              api_key_id)
          SELECT ${id}, 'gift.created', 'gift', ${template.object_id},
                 ${JSON.stringify(template.data)}::json, 'req_bench_' || n, ${template.api_key_id}
          FROM generate_series(1, ${Math.min(BATCH, eventCount - done)}::int) AS n
          RETURNING id`);
        insertedIds.push(...ids);
      }
      const committedIn = Date.now() - startedAt;
      while (insertedIds.some((eventId) => !receiver.receivedAt.has(eventId))) {
        if (Date.now() - startedAt > 600_000) throw new Error('the events were not delivered');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
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
      const deliveriesPerSecond = (eventCount / (lastReceipt - firstCommit)) * 1000;

      printPhases(`Webhook benchmark (${seconds} s per phase, ${connections} connections)`, phases);
      const cpuRows = Object.entries(cpu);
      if (cpuRows.length) {
        const groups = Object.keys(cpuRows[0]![1]);
        console.log('\nCPU ms per write, by process\n');
        console.log(
          ['phase'.padEnd(40), ...groups.map((g) => g.padStart(10)), 'total'.padStart(8)].join(' '),
        );
        for (const [name, row] of cpuRows)
          console.log(
            [
              name.padEnd(40),
              ...groups.map((group) =>
                (row[group] ?? 0).toFixed(2).padStart(Math.max(10, group.length)),
              ),
              Object.values(row)
                .reduce((sum, ms) => sum + ms, 0)
                .toFixed(2)
                .padStart(8),
            ].join(' '),
          );
      }
      const [, without, withEndpoint] = phases as [Phase, Phase, Phase];
      const ratio = withEndpoint.perSecond / without.perSecond;
      console.log(
        `\nwith an endpoint / without: ${ratio.toFixed(2)}x (target ≥ 0.85x, deliveries cost ≤ 15%: ${ratio >= 0.85 ? 'met' : 'missed'})`,
      );
      console.log(
        `during the endpoint phase: ${madeDuring} deliveries made, ${deliveredDuring} received ` +
          `(${(deliveredDuring / seconds).toFixed(0)}/s); backlog drained ` +
          `${(drainedIn / 1000).toFixed(1)} s after; commit to receipt p50 ` +
          `${percentile(underLoad, 50)} ms, p99 ${percentile(underLoad, 99)} ms`,
      );
      console.log(
        `\ndelivery of ${eventCount} events committed in ${(committedIn / 1000).toFixed(1)} s ` +
          `(batches of ${BATCH}): ${deliveriesPerSecond.toFixed(0)} deliveries/s; commit to ` +
          `receipt p50 ${percentile(latencies, 50)} ms, p99 ${percentile(latencies, 99)} ms, ` +
          `max ${latencies.at(-1)} ms; ${receiver.requests() - receiver.receivedAt.size} repeats`,
      );
    });
  } finally {
    await receiver.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
