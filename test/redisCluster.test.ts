/**
 * The write path on a real Redis Cluster of three masters (started by this test on free ports,
 * as child processes), with WRITE_QUEUE_SHARDS=3: institutions' writes spread over the masters;
 * a master killed stops the writes of the institutions of its shard (503, nothing written) and
 * no other's; once it is back (empty: it keeps nothing on disk), every retry with the same key
 * replays or completes its write exactly once.
 */
import { Redis } from 'ioredis';
import { sql } from 'slonik';
import { z } from 'zod';
import { writeQueueLocations } from '../common/queue.js';
import { shardOf } from '../common/queueShards.js';
import {
  startTestService,
  type ApiResponse,
  type Tenant,
  type TestService,
} from './helpers/harness.js';
import { startRedisCluster, type LocalRedisCluster } from './helpers/redisCluster.js';
import { holdDonorRow } from './helpers/rowLock.js';
import { sleep, waitFor, withinPhases } from './helpers/wait.js';

type Body = Record<string, unknown> & { id: number; error?: { code: string } };

const SHARDS = 3;

interface Member {
  tenant: Tenant;
  donorId: number;
  shard: number;
}

let cluster: LocalRedisCluster;
let service: TestService;
const members: Member[] = [];

beforeAll(async () => {
  await withinPhases(110_000, (phase) => setUp(phase));
}, 120_000);

async function setUp(phase: (name: string) => void) {
  phase('starting the Redis Cluster');
  cluster = await startRedisCluster(3);
  phase('starting the service');
  service = await startTestService({
    REDIS_CLUSTER_NODES: cluster.nodes,
    WRITE_QUEUE_SHARDS: String(SHARDS),
    WRITE_TIMEOUT_MS: '3000',
  });
  // Institutions until every shard has two.
  for (let n = 0; members.length < 40; n++) {
    const tenant = n === 0 ? service.tenant : await service.createTenant(`College ${n}`);
    const shard = shardOf(tenant.institutionId, SHARDS);
    if (members.filter((member) => member.shard === shard).length >= 2) continue;
    phase(`creating a donor of institution ${tenant.institutionId} (shard ${shard})`);
    // As a client would: on a loaded machine a first write may outlast WRITE_TIMEOUT_MS.
    const donor = await untilAnswered(() =>
      service.call<Body>('POST', '/api/v1/donors', {
        key: tenant.key,
        body: { role: 'Household', last_name: `Family ${n}`, email: `family-${n}@example.org` },
        headers: { 'Idempotency-Key': `donor-${n}` },
      }),
    ).then((answers) => answers.at(-1)!);
    expect(donor.status).toBe(201);
    members.push({ tenant, donorId: donor.body.id, shard });
    if (new Set(members.map((member) => member.shard)).size === SHARDS && members.length === 6)
      break;
  }
}

afterAll(async () => {
  await service?.close();
  await cluster?.stop();
});

const postGift = (member: Member, key: string) =>
  service.call<Body>('POST', '/api/v1/gifts', {
    key: member.tenant.key,
    body: { donor_id: member.donorId, amount: 30, subject: key, gift_date: '2026-05-01' },
    headers: { 'Idempotency-Key': key },
  });

/**
 * What a client does: the same request (key and body) again after 409, 503 or 504, until an
 * answer; every answer, in order.
 */
async function untilAnswered(send: () => Promise<ApiResponse<Body>>, deadlineMs = 30_000) {
  const answers: ApiResponse<Body>[] = [];
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const answer = await send();
    answers.push(answer);
    if (![409, 503, 504].includes(answer.status) || Date.now() > deadline) return answers;
    await sleep(200);
  }
}

const retried = (member: Member, key: string) => untilAnswered(() => postGift(member, key));

const giftIdsWithSubject = (institutionId: number, subject: string) =>
  service.db.anyFirst(sql.type(z.object({ id: z.number() }))`
    SELECT id FROM gifts WHERE institution_id = ${institutionId} AND subject = ${subject}`);

/** `ask` of each master, in the order of `cluster.masters`. */
function onEachMaster<T>(ask: (node: Redis) => Promise<T>): Promise<T[]> {
  return Promise.all(
    cluster.masters.map(async ({ port }) => {
      const node = new Redis({ port, host: '127.0.0.1' });
      try {
        return await ask(node);
      } finally {
        node.disconnect();
      }
    }),
  );
}

/** Our keys on each master, by SCAN on each (a cluster SCAN sees one node only). */
function keysPerMaster(): Promise<number[]> {
  return onEachMaster(async (node) => {
    let count = 0;
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(
        cursor,
        'MATCH',
        `${service.config.QUEUE_PREFIX}:*`,
        'COUNT',
        1000,
      );
      count += keys.length;
      cursor = next;
    } while (cursor !== '0');
    return count;
  });
}

test('each shard is on a master of its own, and the writes of many institutions spread over all three', async () => {
  const shardMasters = writeQueueLocations(service.config.QUEUE_PREFIX, SHARDS).map(
    ({ prefix }) => cluster.masterOf(prefix).port,
  );
  expect(new Set(shardMasters).size).toBe(3);

  const answers = await Promise.all(
    members.flatMap((member, index) =>
      [0, 1, 2].map((n) => retried(member, `spread-${index}-${n}`).then((all) => all.at(-1)!)),
    ),
  );
  expect(answers.map(({ status }) => status)).toEqual(answers.map(() => 201));

  const spread = await keysPerMaster();
  process.stdout.write(
    `Keys per master after ${answers.length} writes of ${members.length} institutions: ${cluster.masters
      .map(
        ({ port, slots }, index) =>
          `127.0.0.1:${port} (slots ${slots.join('-')}): ${spread[index]}`,
      )
      .join('; ')}\n`,
  );
  for (const count of spread) expect(count).toBeGreaterThan(0);
});

test("replies travel on sharded channels, each on its shard's master; nothing on the cluster bus", async () => {
  const pattern = `${service.config.QUEUE_PREFIX}*:replies:*`;
  const channels = await onEachMaster(async (node) => ({
    sharded: (await node.call('PUBSUB', 'SHARDCHANNELS', pattern)) as string[],
    plain: (await node.call('PUBSUB', 'CHANNELS', pattern)) as string[],
  }));
  // The one API process: on each master, one sharded channel, under that master's shard.
  const expected = writeQueueLocations(service.config.QUEUE_PREFIX, SHARDS).map(({ prefix }) => ({
    port: cluster.masterOf(prefix).port,
    prefix,
  }));
  channels.forEach(({ sharded, plain }, index) => {
    const shard = expected.find(({ port }) => port === cluster.masters[index]!.port)!;
    expect(plain).toEqual([]);
    expect(sharded).toHaveLength(1);
    expect(sharded[0]!.startsWith(`${shard.prefix}:replies:`)).toBe(true);
  });
});

test('a master killed: its shard answers 503 and writes nothing, the others keep writing; once back, every retry writes once', async () => {
  const [victimShard] = writeQueueLocations(service.config.QUEUE_PREFIX, SHARDS);
  const victim = cluster.masterOf(victimShard!.prefix);
  const down = members.filter((member) => member.shard === 0);
  const up = members.filter((member) => member.shard !== 0);

  // Writes in flight on the shard when its master dies: held in the worker by a row lock (they
  // commit after the master is gone, and cannot settle their keys), or still in the queue (lost
  // with it).
  const inFlightKeys = down.flatMap((member, index) =>
    Array.from({ length: 8 }, (_, n) => ({ member, key: `in-flight-${index}-${n}` })),
  );
  const hold = await holdDonorRow(service.db, down[0]!.donorId);
  let first: ApiResponse<Body>[];
  try {
    const firstAnswers = Promise.all(inFlightKeys.map(({ member, key }) => postGift(member, key)));
    await waitFor(
      async () =>
        (await service.db.oneFirst(
          sql.type(z.object({ n: z.number() }))`
            SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock'`,
        )) > 0,
      10_000,
      'a write to wait on the held donor',
    );
    await cluster.kill(victim);
    await hold.release();
    first = await firstAnswers;
  } finally {
    await hold.release();
  }
  const tally = (answers: ApiResponse<Body>[]) =>
    Object.entries(
      answers.reduce<Record<number, number>>((counts, { status }) => {
        counts[status] = (counts[status] ?? 0) + 1;
        return counts;
      }, {}),
    )
      .map(([status, count]) => `${count}× ${status}`)
      .join(', ');
  process.stdout.write(`Writes in flight when the master died: ${tally(first)}\n`);
  for (const answer of first) expect([201, 503, 504]).toContain(answer.status);

  // While it is down: the shard's institutions get 503 and nothing is written, again and again.
  for (const member of down) {
    for (let attempt = 0; attempt < 2; attempt++) {
      const refused = await postGift(member, `while-down-${member.tenant.institutionId}`);
      expect(refused.status).toBe(503);
      expect(refused.body.error?.code).toBe('service_unavailable');
    }
    expect(
      await giftIdsWithSubject(
        member.tenant.institutionId,
        `while-down-${member.tenant.institutionId}`,
      ),
    ).toHaveLength(0);
  }
  // The others write, each key once (a reply lost with the dead node is a 504 that a retry
  // replays).
  const others = await Promise.all(
    up.map(async (member) => ({
      member,
      answers: await retried(member, `others-${member.tenant.institutionId}`),
    })),
  );
  for (const { member, answers } of others) {
    const final = answers.at(-1)!;
    expect(final.status).toBe(201);
    expect(
      await giftIdsWithSubject(
        member.tenant.institutionId,
        `others-${member.tenant.institutionId}`,
      ),
    ).toEqual([final.body.id]);
  }

  // Back, without the keys it held: every key of the shard is written exactly once.
  await cluster.restart(victim);
  await cluster.waitUntilHealthy();
  const keys = [
    ...inFlightKeys.map(({ member, key }, index) => ({ member, key, before: first[index]! })),
    ...down.map((member) => ({
      member,
      key: `while-down-${member.tenant.institutionId}`,
      before: null,
    })),
  ];
  for (const { member, key, before } of keys) {
    const answers = await retried(member, key);
    const final = answers.at(-1)!;
    expect(final.status).toBe(201);
    const stored = await giftIdsWithSubject(member.tenant.institutionId, key);
    expect(stored).toEqual([final.body.id]);
    if (before?.status === 201) {
      // Answered before the master died: the retry replays that very gift.
      expect(final.body).toEqual(before.body);
      expect(final.headers.get('idempotent-replayed')).toBe('true');
    }
  }
  // And the others' writes replay.
  for (const { member, answers } of others) {
    const again = await postGift(member, `others-${member.tenant.institutionId}`);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(answers.at(-1)!.body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
  }
});
