import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import calculateSlot from 'cluster-key-slot';
import { freePort, waitForPort } from './processes.js';
import { waitFor } from './wait.js';

const SLOTS = 16_384;

export interface ClusterMaster {
  port: number;
  /** Cluster bus port, set explicitly: the default (port + 10000) may be out of range. */
  busPort: number;
  /** The first and last slot it serves. */
  slots: [number, number];
  process: ChildProcess | null;
}

export interface LocalRedisCluster {
  masters: ClusterMaster[];
  /** For REDIS_CLUSTER_NODES. */
  nodes: string;
  /** The master serving a key (its hash tag's slot). */
  masterOf(key: string): ClusterMaster;
  /** SIGKILL: the master is gone with its data (the nodes keep nothing on disk but their config). */
  kill(master: ClusterMaster): Promise<void>;
  /** Starts it again on its port and config: it rejoins with its slots, and no keys. */
  restart(master: ClusterMaster): Promise<void>;
  /** Resolves once every live node says every slot is served. */
  waitUntilHealthy(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A real Redis Cluster of `count` masters on loopback, as child processes of the test (so one can
 * be killed and restarted), with an even split of the slots as `redis-cli --cluster create`
 * makes. `cluster-require-full-coverage no`: the live masters keep serving while one is down.
 */
export interface ClusterSecurity {
  /** `requirepass` (and `masterauth`) on every node. */
  password?: string;
  /** TLS only, with this certificate and key, signed by `ca` (client certificates not asked). */
  tls?: { cert: string; key: string; ca: string };
}

export async function startRedisCluster(
  count = 3,
  security: ClusterSecurity = {},
): Promise<LocalRedisCluster> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'dgs-redis-cluster-'));
  const masters: ClusterMaster[] = [];
  for (let index = 0; index < count; index++) {
    masters.push({
      port: await freePort(),
      busPort: await freePort(),
      // As `redis-cli --cluster create` splits them.
      slots: [
        index === 0 ? 0 : Math.round((index * SLOTS) / count),
        index === count - 1 ? SLOTS - 1 : Math.round(((index + 1) * SLOTS) / count) - 1,
      ],
      process: null,
    });
  }

  const launch = async (master: ClusterMaster) => {
    master.process = spawn(
      'redis-server',
      [
        ...(security.tls
          ? [
              ...['--port', '0', '--tls-port', String(master.port)],
              ...['--tls-cert-file', security.tls.cert, '--tls-key-file', security.tls.key],
              ...['--tls-ca-cert-file', security.tls.ca, '--tls-cluster', 'yes'],
              ...['--tls-auth-clients', 'no'],
            ]
          : ['--port', String(master.port)]),
        ...(security.password
          ? ['--requirepass', security.password, '--masterauth', security.password]
          : []),
        ...['--bind', '127.0.0.1', '--dir', dir],
        ...['--cluster-enabled', 'yes', '--cluster-port', String(master.busPort)],
        ...['--cluster-config-file', `nodes-${master.port}.conf`],
        ...['--cluster-node-timeout', '1000', '--cluster-require-full-coverage', 'no'],
        ...['--save', '', '--appendonly', 'no'],
      ],
      { stdio: 'ignore' },
    );
    await waitForPort(master.port);
  };
  const client = (master: ClusterMaster) =>
    new Redis({
      port: master.port,
      host: '127.0.0.1',
      maxRetriesPerRequest: 1,
      ...(security.password ? { password: security.password } : {}),
      ...(security.tls ? { tls: { ca: readFileSync(security.tls.ca) } } : {}),
    });
  const onEach = async <T>(fn: (redis: Redis, master: ClusterMaster) => Promise<T>) => {
    const results: T[] = [];
    for (const master of masters) {
      if (!master.process) continue;
      const redis = client(master);
      try {
        results.push(await fn(redis, master));
      } finally {
        redis.disconnect();
      }
    }
    return results;
  };

  const cluster: LocalRedisCluster = {
    masters,
    nodes: masters.map(({ port }) => `127.0.0.1:${port}`).join(','),
    masterOf(key) {
      const slot = calculateSlot(key);
      return masters.find(({ slots: [first, last] }) => slot >= first && slot <= last)!;
    },
    async kill(master) {
      const proc = master.process;
      master.process = null;
      if (!proc || proc.exitCode !== null) return;
      const gone = new Promise((resolve) => proc.once('exit', resolve));
      proc.kill('SIGKILL');
      await gone;
    },
    async restart(master) {
      await launch(master);
    },
    async waitUntilHealthy(timeoutMs = 20_000) {
      await waitFor(
        async () =>
          (
            await onEach(async (redis) =>
              String(await redis.call('CLUSTER', 'INFO')).includes('cluster_state:ok'),
            ).catch(() => [false])
          ).every(Boolean),
        timeoutMs,
        'the Redis Cluster to serve every slot',
      );
    },
    async stop() {
      for (const master of masters) await cluster.kill(master);
      await rm(dir, { recursive: true, force: true });
    },
  };

  try {
    for (const master of masters) await launch(master);
    await onEach((redis, master) =>
      redis.call('CLUSTER', 'ADDSLOTSRANGE', String(master.slots[0]), String(master.slots[1])),
    );
    const [first, ...others] = masters;
    const meet = client(first!);
    try {
      for (const other of others)
        await meet.call('CLUSTER', 'MEET', '127.0.0.1', String(other.port), String(other.busPort));
    } finally {
      meet.disconnect();
    }
    await cluster.waitUntilHealthy();
  } catch (error) {
    await cluster.stop();
    throw error;
  }
  return cluster;
}
