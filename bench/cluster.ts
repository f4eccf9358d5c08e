/**
 * `npm run bench:cluster`: what a write costs on one Redis and on a Redis Cluster of three masters
 * with the writes sharded over three queues, and how the keys spread over the masters. Gifts are
 * posted at BENCH_CONNECTIONS connections for many institutions in turn, each with an
 * Idempotency-Key of its own, through one API process and one worker process per phase:
 *
 * 1. one Redis (REDIS_URL), one write queue: the service as deployed without a cluster;
 * 2. one Redis, WRITE_QUEUE_SHARDS=3: the cost of the shards alone;
 * 3. the cluster (REDIS_CLUSTER_NODES), WRITE_QUEUE_SHARDS=3.
 *
 * Each phase starts its own API and worker, loads them unmeasured for a few seconds (a fresh
 * process first compiles its hot code), then measures. The phases run in BENCH_ROUNDS rounds,
 * every other round in reverse order, so that no setup is always the one measured on the
 * largest database or the most loaded minute. Printed per setup: writes/s (each round, and all
 * rounds together), p99, errors, writes per job (from the API's write_job_writes metric), the
 * Redis commands each write cost (INFO commandstats on each server, before and after) and,
 * where /proc is readable, the CPU each write cost the API, the worker, Postgres, Redis (every
 * master of the cluster) and the load generator.
 *
 * The verdict: CPU per write in all on the cluster at most 1.3x one Redis with one queue. Its
 * throughput is printed but not judged: every process and all three masters share this machine's
 * cores, so the cluster's gain (Redis work spread over machines) cannot show here, only its cost
 * (docs/scaling.md).
 *
 * The npm script runs it under .ci/redis-cluster.sh, which starts three masters on loopback; run
 * `node dist/bench/cluster.js` with REDIS_CLUSTER_NODES set to measure another cluster.
 *
 * Environment: DATABASE_URL (a server where a scratch database may be created), REDIS_URL,
 * REDIS_CLUSTER_NODES, WRITE_QUEUE_SHARDS (for phases 2 and 3, default 3), BENCH_SECONDS (per
 * phase, default 10), BENCH_ROUNDS (default 2), BENCH_CONNECTIONS (default 50),
 * BENCH_INSTITUTIONS (default 36).
 */
import autocannon from 'autocannon';
import { Cluster, Redis as SingleRedis } from 'ioredis';
import { sql } from 'slonik';
import { z } from 'zod';
import { loadConfig } from '../common/config.js';
import { createInstitution } from '../common/institutions.js';
import { shardOf } from '../common/queueShards.js';
import { createRedis, deleteMatching, redisTargetOf, redisReady } from '../common/redis.js';
import { cpuPerRequest, readCpu } from './cpuTime.js';
import { freePort, stop, until } from './processes.js';
import { insertBenchRecords, redisUrl, withBenchStack, type BenchStack } from './stack.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const rounds = Number(process.env.BENCH_ROUNDS ?? 2);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
const institutions = Number(process.env.BENCH_INSTITUTIONS ?? 36);
const clusterNodes = process.env.REDIS_CLUSTER_NODES ?? '';
const clusterShards = process.env.WRITE_QUEUE_SHARDS ?? '3';
/** Unmeasured load on each phase's fresh processes. */
const WARM_UP_SECONDS = 3;
/** The most CPU per write, in all, the cluster may cost against one Redis with one queue. */
const CPU_TARGET = 1.3;

interface Member {
  key: string;
  donorId: number;
  institutionId: number;
}

interface Setup {
  name: string;
  redis: Record<string, string>;
  /** The Redis server processes the setup uses (on this machine). */
  redisPids: number[];
  /** Its Redis servers (each master of a cluster), for their command counts. */
  redisServers: () => SingleRedis[];
}

interface Measured {
  requests: number;
  perSecond: number;
  p99: number;
  errors: number;
  jobs: number;
  writes: number;
  cpu: Record<string, number> | null;
  /** Redis commands run, by name (INFO commandstats, commands run by scripts included). */
  commands: Map<string, number>;
}

/** Gifts for each member in turn, each under a key of its own, for `duration` seconds. */
async function load(url: string, members: Member[], label: string, duration: number) {
  let issued = 0;
  return autocannon({
    url,
    connections,
    duration,
    method: 'POST',
    requests: [
      {
        setupRequest: (request: autocannon.Request) => {
          const n = issued++;
          const member = members[n % members.length]!;
          return {
            ...request,
            headers: {
              'Content-Type': 'application/json',
              'X-Service-API-Key': member.key,
              'Idempotency-Key': `${label}-${n}`,
            },
            body: JSON.stringify({
              donor_id: member.donorId,
              amount: 25.5,
              subject: 'Benchmark gift',
              gift_date: '2026-11-21',
            }),
          };
        },
      },
    ],
  });
}

/** The API's write_job_writes histogram: jobs queued and the writes they carried. */
async function queuedWrites(apiUrl: string): Promise<{ jobs: number; writes: number }> {
  const text = await (await fetch(`${apiUrl}/metrics`)).text();
  return {
    jobs: Number(/^write_job_writes_count (\d+)/m.exec(text)?.[1] ?? 0),
    writes: Number(/^write_job_writes_sum (\d+)/m.exec(text)?.[1] ?? 0),
  };
}

/** Starts an API and a worker for `setup`, warms them up, measures one phase, stops them. */
async function measure(
  stack: BenchStack,
  setup: Setup,
  members: Member[],
  label: string,
): Promise<Measured> {
  const port = await freePort();
  const api = stack.spawn('api/main.js', { ...setup.redis, PORT: String(port) });
  const worker = stack.spawn('worker/main.js', setup.redis);
  const apiUrl = `http://127.0.0.1:${port}`;
  const url = `${apiUrl}/api/v1/gifts`;
  try {
    await until(`the API and worker of "${setup.name}"`, async () => {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Service-API-Key': members[0]!.key },
        body: JSON.stringify({
          donor_id: members[0]!.donorId,
          amount: 1,
          subject: 'Warm-up',
          gift_date: '2026-11-21',
        }),
      });
      return response.status === 201;
    });
    await load(url, members, `${label}-warm`, WARM_UP_SECONDS);
    const groups = async () => ({
      API: [api.pid ?? 0],
      worker: [worker.pid ?? 0],
      Postgres: await postgresPids(stack),
      Redis: setup.redisPids,
      'load generator': [process.pid],
    });
    const servers = setup.redisServers();
    const [cpuBefore, queuedBefore, commandsBefore] = await Promise.all([
      readCpu(await groups()),
      queuedWrites(apiUrl),
      commandCounts(servers),
    ]);
    const result = await load(url, members, label, seconds);
    const [cpuAfter, queuedAfter, commandsAfter] = await Promise.all([
      readCpu(await groups()),
      queuedWrites(apiUrl),
      commandCounts(servers),
    ]).finally(() => servers.forEach((server) => server.disconnect()));
    const requests = result.requests.total;
    return {
      requests,
      perSecond: result.requests.average,
      p99: result.latency.p99,
      errors: result.errors + result.non2xx,
      jobs: queuedAfter.jobs - queuedBefore.jobs,
      writes: queuedAfter.writes - queuedBefore.writes,
      cpu: cpuBefore && cpuAfter ? cpuPerRequest(cpuBefore, cpuAfter, requests) : null,
      commands: new Map(
        [...commandsAfter].map(([name, calls]) => [name, calls - (commandsBefore.get(name) ?? 0)]),
      ),
    };
  } finally {
    await Promise.all([stop(api), stop(worker)]);
  }
}

const total = (counts: Map<string, number>) => [...counts.values()].reduce((a, b) => a + b, 0);

/** Commands each server has run since it started, summed by name (INFO commandstats). */
async function commandCounts(servers: SingleRedis[]): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const info of await Promise.all(servers.map((server) => server.info('commandstats'))))
    for (const [, name, calls] of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm))
      counts.set(name!, (counts.get(name!) ?? 0) + Number(calls));
  return counts;
}

/** The backends of the scratch database: the service's Postgres work. */
async function postgresPids(stack: BenchStack): Promise<number[]> {
  return (
    await stack.pool.anyFirst(sql.type(z.object({ pid: z.number() }))`
      SELECT pid FROM pg_stat_activity
      WHERE datname = current_database() AND pid <> pg_backend_pid()`)
  ).map(Number);
}

/** The pid of a Redis server on this machine, from INFO; none for a remote one. */
async function redisPid(redis: SingleRedis): Promise<number[]> {
  const host = redis.options.host ?? '127.0.0.1';
  if (!['127.0.0.1', 'localhost', '::1'].includes(host)) return [];
  const info = await redis.info('server');
  const pid = Number(/process_id:(\d+)/.exec(info)?.[1] ?? 0);
  return pid ? [pid] : [];
}

function clusterClient(): Cluster {
  return createRedis(
    redisTargetOf(loadConfig({ ...minimalEnv, REDIS_CLUSTER_NODES: clusterNodes })),
    'blocking',
  ) as Cluster;
}

/** Our keys on each master of the cluster (SCAN on each; a cluster SCAN sees one node). */
async function spreadOverMasters(prefix: string): Promise<string[]> {
  const cluster = clusterClient();
  await redisReady(cluster);
  try {
    const lines: string[] = [];
    for (const node of cluster.nodes('master')) {
      let count = 0;
      let cursor = '0';
      do {
        const [next, keys] = await node.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
        count += keys.length;
        cursor = next;
      } while (cursor !== '0');
      lines.push(`${node.options.host}:${node.options.port}: ${count} keys`);
    }
    await deleteMatching(cluster, `${prefix}:*`);
    return lines;
  } finally {
    cluster.disconnect();
  }
}

/** Enough for loadConfig to parse REDIS_CLUSTER_NODES the way the service does. */
const minimalEnv = {
  DATABASE_URL: 'postgres://unused@127.0.0.1/unused',
  CURSOR_SECRET: 'x'.repeat(32),
};

async function setups(): Promise<Setup[]> {
  const single = createRedis(redisUrl, 'blocking');
  const cluster = clusterClient();
  try {
    await Promise.all([redisReady(single), redisReady(cluster)]);
    const singlePids = await redisPid(single as SingleRedis);
    const masterPids = (
      await Promise.all(cluster.nodes('master').map((node) => redisPid(node)))
    ).flat();
    const singleOptions = (single as SingleRedis).options;
    const masterOptions = cluster.nodes('master').map((node) => node.options);
    const connect = (options: (typeof masterOptions)[number]) =>
      new SingleRedis({ ...options, lazyConnect: false, enableOfflineQueue: true });
    const singleServers = () => [connect(singleOptions)];
    return [
      {
        name: 'one Redis, 1 queue',
        redis: { REDIS_CLUSTER_NODES: '', WRITE_QUEUE_SHARDS: '1' },
        redisPids: singlePids,
        redisServers: singleServers,
      },
      {
        name: `one Redis, ${clusterShards} shards`,
        redis: { REDIS_CLUSTER_NODES: '', WRITE_QUEUE_SHARDS: clusterShards },
        redisPids: singlePids,
        redisServers: singleServers,
      },
      {
        name: `cluster, ${clusterShards} shards`,
        redis: { REDIS_CLUSTER_NODES: clusterNodes, WRITE_QUEUE_SHARDS: clusterShards },
        redisPids: masterPids,
        redisServers: () => masterOptions.map(connect),
      },
    ];
  } finally {
    single.disconnect();
    cluster.disconnect();
  }
}

function print(all: Setup[], results: Map<string, Measured[]>) {
  console.log(
    `\nWrites of ${institutions} institutions at ${connections} connections, ${seconds} s per ` +
      `phase, ${rounds} rounds, 1 API and 1 worker process (${new Date().toISOString()})\n`,
  );
  const rows = all.map((setup) => {
    const runs = results.get(setup.name)!;
    const requests = runs.reduce((sum, run) => sum + run.requests, 0);
    const perSecond = runs.reduce((sum, run) => sum + run.perSecond, 0) / runs.length;
    const jobs = runs.reduce((sum, run) => sum + run.jobs, 0);
    const writes = runs.reduce((sum, run) => sum + run.writes, 0);
    const commands = new Map<string, number>();
    for (const run of runs)
      for (const [name, calls] of run.commands)
        commands.set(name, (commands.get(name) ?? 0) + calls);
    // CPU per write over all rounds: each round's per-write figure weighted by its writes.
    const cpu = runs.every((run) => run.cpu)
      ? Object.fromEntries(
          Object.keys(runs[0]!.cpu!).map((group) => [
            group,
            runs.reduce((sum, run) => sum + run.cpu![group]! * run.requests, 0) / requests,
          ]),
        )
      : null;
    const cpuInAll = cpu ? Object.values(cpu).reduce((sum, ms) => sum + ms, 0) : null;
    return {
      setup: setup.name,
      'writes/s (rounds)': runs.map((run) => Math.round(run.perSecond)).join(' / '),
      'writes/s': Math.round(perSecond),
      'p99 ms': Math.max(...runs.map((run) => run.p99)),
      errors: runs.reduce((sum, run) => sum + run.errors, 0),
      'writes per job': jobs ? (writes / jobs).toFixed(1) : '-',
      'Redis commands per write (scripts)': `${(total(commands) / requests).toFixed(1)} (${((commands.get('evalsha') ?? 0) / requests).toFixed(2)})`,
      ...(cpu
        ? {
            'CPU ms per write (API / worker / Postgres / Redis / load / all)': [
              ...Object.values(cpu).map((ms) => ms.toFixed(2)),
              cpuInAll!.toFixed(2),
            ].join(' / '),
          }
        : {}),
      cpuInAll,
      commands,
      requests,
    };
  });
  console.table(rows.map(({ cpuInAll: _, commands: __, requests: ___, ...row }) => row));
  console.log('Redis commands per write, the most frequent (those run by scripts included):');
  for (const { setup, commands, requests } of rows)
    console.log(
      `  ${setup}: ${[...commands]
        .sort((a, b) => b[1] - a[1])
        .slice(0, 8)
        .map(([name, calls]) => `${name} ${(calls / requests).toFixed(2)}`)
        .join(', ')}`,
    );
  console.log(
    `Redis commands per write: ${rows
      .map(
        ({ setup, commands, requests }) => `${setup}: ${(total(commands) / requests).toFixed(1)}`,
      )
      .join('; ')}`,
  );
  const single = rows[0]!.cpuInAll;
  const cluster = rows[2]!.cpuInAll;
  console.log(
    single === null || cluster === null
      ? `CPU per write: not measured (/proc not readable), target ≤ ${CPU_TARGET}x not judged`
      : `CPU per write, cluster with ${clusterShards} shards against one Redis with 1 queue: ` +
          `${cluster.toFixed(2)} / ${single.toFixed(2)} ms = ${(cluster / single).toFixed(2)}x ` +
          `(target ≤ ${CPU_TARGET}x: ${cluster <= single * CPU_TARGET ? 'met' : 'NOT met'})`,
  );
}

async function main() {
  if (!clusterNodes) {
    process.stderr.write(
      'REDIS_CLUSTER_NODES is not set: run `npm run bench:cluster` (it starts a cluster), or set it.\n',
    );
    process.exit(2);
  }
  await withBenchStack('cluster', async (stack) => {
    const members: Member[] = [];
    for (let n = 0; n < institutions; n++) {
      const { institution, apiKey } = await createInstitution(stack.pool, `Bench ${n}`, 'USD');
      const { donorIds } = await insertBenchRecords(stack.pool, institution.id, {
        donors: 1,
        funds: 0,
      });
      members.push({ key: apiKey.key, donorId: donorIds[0]!, institutionId: institution.id });
    }
    const all = await setups();
    const results = new Map<string, Measured[]>(all.map((setup) => [setup.name, []]));
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? all : [...all].reverse();
      for (const setup of order)
        results
          .get(setup.name)!
          .push(await measure(stack, setup, members, `r${round}-${all.indexOf(setup)}`));
    }
    print(all, results);
    const shards = Number(clusterShards);
    const perShard = Array.from(
      { length: shards },
      (_, shard) =>
        members.filter(({ institutionId }) => shardOf(institutionId, shards) === shard).length,
    );
    console.log(`\nInstitutions per shard: ${perShard.join(', ')}`);
    console.log(`Keys on each master after the cluster phases (prefix ${stack.env.QUEUE_PREFIX}):`);
    for (const line of await spreadOverMasters(stack.env.QUEUE_PREFIX!)) console.log(`  ${line}`);
  });
}

await main();
