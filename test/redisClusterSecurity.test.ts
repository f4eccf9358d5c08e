/**
 * A Redis Cluster whose nodes ask for a password and speak only TLS, as managed clusters do:
 * with REDIS_CLUSTER_PASSWORD and REDIS_CLUSTER_TLS=true (and the private CA trusted through
 * NODE_EXTRA_CA_CERTS) the API and worker, as real processes, write through it exactly once;
 * with the wrong password or without TLS they refuse to start, saying what to set.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { sql } from 'slonik';
import { lockKeyFor } from '../common/idempotency/lock.js';
import { startTestService, type TestService } from './helpers/harness.js';
import {
  configEnv,
  killProcess,
  spawnEntry,
  startEntry,
  waitForLog,
  type ServiceProcess,
} from './helpers/processes.js';
import { startRedisCluster, type LocalRedisCluster } from './helpers/redisCluster.js';
import { makeTlsFiles, type TlsFiles } from './helpers/tlsFiles.js';
import { within } from '../common/deadline.js';

const PASSWORD = 'cluster-secret-1';
let dir: string;
let tls: TlsFiles;
let cluster: LocalRedisCluster;
let service: TestService;
const processes: ServiceProcess[] = [];

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'dgs-redis-tls-'));
  tls = makeTlsFiles(dir);
  cluster = await startRedisCluster(3, { password: PASSWORD, tls });
  // The database and the institution; its in-process API and worker use the suite's own Redis.
  service = await startTestService();
}, 60_000);

afterAll(async () => {
  await Promise.all(processes.map((proc) => killProcess(proc)));
  await service?.close();
  await cluster?.stop();
  await rm(dir, { recursive: true, force: true });
});

/** The environment of an API or worker process on the secured cluster, with `changes`. */
const clusterEnv = (changes: Record<string, string> = {}) =>
  configEnv(service.config, {
    REDIS_CLUSTER_NODES: cluster.nodes,
    REDIS_CLUSTER_PASSWORD: PASSWORD,
    REDIS_CLUSTER_TLS: 'true',
    WRITE_QUEUE_SHARDS: '3',
    NODE_EXTRA_CA_CERTS: tls.ca,
    ...changes,
  });

test('with the password and TLS, writes go through the cluster once, and its keys are there', async () => {
  const env = clusterEnv();
  const api = await startEntry('api/main.js', env);
  processes.push(api, await startEntry('worker/main.js', env));
  const { port } = await waitForLog(api, 'api listening');
  const post = () =>
    fetch(`http://127.0.0.1:${String(port)}/api/v1/donors`, {
      method: 'POST',
      headers: {
        'X-Service-API-Key': service.tenant.key,
        'Content-Type': 'application/json',
        'Idempotency-Key': 'secured-donor',
      },
      body: JSON.stringify({ role: 'Individual', first_name: 'Ada', last_name: 'Secure' }),
    });
  const first = await post();
  expect(first.status).toBe(201);
  const created = (await first.json()) as { id: number };
  const replay = await post();
  expect(replay.status).toBe(201);
  expect(((await replay.json()) as { id: number }).id).toBe(created.id);
  expect(
    await service.db.oneFirst(sql.unsafe`
      SELECT count(*)::int FROM donors
      WHERE institution_id = ${service.tenant.institutionId} AND last_name = 'Secure'`),
  ).toBe(1);

  // Its idempotency key is done on the secured cluster (read back over TLS with the password).
  const settings = { QUEUE_PREFIX: service.config.QUEUE_PREFIX, WRITE_QUEUE_SHARDS: 3 };
  const lockKey = lockKeyFor(settings, service.tenant.institutionId, 'secured-donor');
  const node = new Redis({
    host: '127.0.0.1',
    port: cluster.masterOf(lockKey).port,
    password: PASSWORD,
    tls: { ca: readFileSync(tls.ca) },
  });
  try {
    expect(await node.get(lockKey)).toMatch(/^done:/);
  } finally {
    node.disconnect();
  }
});

test.each([
  ['a wrong password', { REDIS_CLUSTER_PASSWORD: 'not-the-password' }, /REDIS_CLUSTER_PASSWORD/],
  ['TLS not turned on', { REDIS_CLUSTER_TLS: 'false' }, /REDIS_CLUSTER_TLS/],
])('with %s the API refuses to start and says what to set', async (_case, changes, hint) => {
  const api = spawnEntry('api/main.js', clusterEnv(changes));
  processes.push(api);
  const code = await within(api.exited, 30_000, () => 'still running');
  expect(code).toBe(1);
  const output = [...api.stdout, ...api.stderr].join('\n');
  expect(output).toMatch(hint);
  expect(output).not.toMatch(/\n\s+at /);
});
