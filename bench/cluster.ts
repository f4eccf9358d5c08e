/**
 * `npm run bench:cluster`: write throughput on one Redis and on a Redis Cluster of three masters
 * with the writes sharded over three queues, and how the keys spread over the masters. Gifts are
 * posted at BENCH_CONNECTIONS connections for many institutions in turn, each with an
 * Idempotency-Key of its own, through one API process and one worker process per phase:
 *
 * 1. one Redis (REDIS_URL), one write queue: the service as deployed without a cluster;
 * 2. one Redis, WRITE_QUEUE_SHARDS=3: the cost of the shards alone;
 * 3. the cluster (REDIS_CLUSTER_NODES), WRITE_QUEUE_SHARDS=3.
 *
 * The npm script runs it under .ci/redis-cluster.sh, which starts three masters on loopback; run
 * `node dist/bench/cluster.js` with REDIS_CLUSTER_NODES set to measure another cluster.
 *
 * Environment: DATABASE_URL (a server where a scratch database may be created), REDIS_URL,
 * REDIS_CLUSTER_NODES, WRITE_QUEUE_SHARDS (for phase 3, default 3), BENCH_SECONDS (per phase,
 * default 10), BENCH_CONNECTIONS (default 50), BENCH_INSTITUTIONS (default 36).
 */
import autocannon from 'autocannon';
import { Cluster } from 'ioredis';
import { loadConfig } from '../common/config.js';
import { createInstitution } from '../common/institutions.js';
import { shardOf } from '../common/queueShards.js';
import { createRedis, deleteMatching, redisTargetOf, redisReady } from '../common/redis.js';
import { printPhases, type Phase } from './phases.js';
import { freePort, stop, until } from './processes.js';
import { insertBenchRecords, withBenchStack, type BenchStack } from './stack.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50);
const institutions = Number(process.env.BENCH_INSTITUTIONS ?? 36);
const clusterNodes = process.env.REDIS_CLUSTER_NODES ?? '';
const clusterShards = process.env.WRITE_QUEUE_SHARDS ?? '3';

interface Member {
  key: string;
  donorId: number;
  institutionId: number;
}

/** A gift for each member in turn, each under a key of its own. */
async function writePhase(name: string, url: string, members: Member[]): Promise<Phase> {
  let issued = 0;
  const result = await autocannon({
    url,
    connections,
    duration: seconds,
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
              'Idempotency-Key': `${name}-${n}`,
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
  return {
    name,
    perSecond: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.non2xx,
  };
}

/** Starts an API and a worker with `redis` settings, loads them, stops them. */
async function measure(
  stack: BenchStack,
  name: string,
  redis: Record<string, string>,
  members: Member[],
): Promise<Phase> {
  const port = await freePort();
  const api = stack.spawn('api/main.js', { ...redis, PORT: String(port) });
  const worker = stack.spawn('worker/main.js', redis);
  const url = `http://127.0.0.1:${port}/api/v1/gifts`;
  try {
    await until(`the API and worker of "${name}"`, async () => {
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
    return await writePhase(name, url, members);
  } finally {
    await Promise.all([stop(api), stop(worker)]);
  }
}

/** Our keys on each master of the cluster (SCAN on each; a cluster SCAN sees one node). */
async function spreadOverMasters(prefix: string): Promise<string[]> {
  const cluster = createRedis(
    redisTargetOf(loadConfig({ ...minimalEnv, REDIS_CLUSTER_NODES: clusterNodes })),
    'blocking',
  ) as Cluster;
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
    const phases: Phase[] = [];
    phases.push(
      await measure(
        stack,
        'one Redis, 1 queue',
        { REDIS_CLUSTER_NODES: '', WRITE_QUEUE_SHARDS: '1' },
        members,
      ),
    );
    phases.push(
      await measure(
        stack,
        `one Redis, ${clusterShards} shards`,
        { REDIS_CLUSTER_NODES: '', WRITE_QUEUE_SHARDS: clusterShards },
        members,
      ),
    );
    phases.push(
      await measure(
        stack,
        `cluster, ${clusterShards} shards`,
        { REDIS_CLUSTER_NODES: clusterNodes, WRITE_QUEUE_SHARDS: clusterShards },
        members,
      ),
    );
    printPhases(
      `Writes of ${institutions} institutions at ${connections} connections, ${seconds} s per phase, 1 API and 1 worker process (${new Date().toISOString()})`,
      phases,
    );
    const shards = Number(clusterShards);
    const perShard = Array.from(
      { length: shards },
      (_, shard) =>
        members.filter(({ institutionId }) => shardOf(institutionId, shards) === shard).length,
    );
    console.log(`\nInstitutions per shard: ${perShard.join(', ')}`);
    console.log(`Keys on each master after the cluster phase (prefix ${stack.env.QUEUE_PREFIX}):`);
    for (const line of await spreadOverMasters(stack.env.QUEUE_PREFIX!)) console.log(`  ${line}`);
  });
}

await main();
