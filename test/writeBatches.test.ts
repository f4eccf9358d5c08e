import type { Job, Queue } from 'bullmq';
import { sql } from 'slonik';
import { WriteBatches } from '../api/writeBatches.js';
import type { WriteJob } from '../common/commands/runWrite.js';
import type { WriteResult } from '../common/commands/writeResult.js';
import { leaseAfterQueuedMs, lockKeyFor } from '../common/idempotency/lock.js';
import {
  MAX_WRITES_PER_JOB,
  shardPrefixFor,
  WRITE_JOB,
  WriteQueues,
  writesOf,
  type WriteQueueJob,
} from '../common/queue.js';
import { ReplyInbox } from '../common/replies.js';
import {
  closeQueueConnection,
  createRedis,
  queueConnection,
  redisTargetOf,
  type Redis,
} from '../common/redis.js';
import { shardOf } from '../common/queueShards.js';
import { createGift } from '../common/resources/gifts/commands.js';
import { startTestService, type TestService } from './helpers/harness.js';
import { newDonor } from './helpers/singleStatement.js';
import { writeJobFor } from './helpers/writeJob.js';
import { waitFor } from './helpers/wait.js';
import { openWriteQueue } from './helpers/writeQueue.js';

/**
 * The writes one API process receives in one turn of its event loop travel to the worker as one
 * job (api/writeBatches.ts): their leases are taken in one round trip, the worker settles them
 * and answers them in one message, and each write still gets its own answer, receipt and event.
 * Driven here through the API's own WriteBatches, on the service's real Redis, queue and worker,
 * so that "one turn" is exact.
 */

let service: TestService;
let batches: WriteBatches;
let queues: WriteQueues;
let replies: ReplyInbox;
let queue: Queue;
let connection: ReturnType<typeof queueConnection>;
let donorId: number;

const gift = (subject: string, amount = 30) => ({
  donor_id: donorId,
  amount,
  subject,
  gift_date: '2026-05-01',
});

const write = (body: Record<string, unknown>, idempotencyKey: string | null = null): WriteJob =>
  writeJobFor(service.tenant, createGift, body, idempotencyKey);

const pauseWorkers = () => Promise.all(service.workers.map(({ worker }) => worker.pause()));
const resumeWorkers = () => {
  for (const { worker } of service.workers) worker.resume();
};
const waitingJobs = async () => (await queue.getWaiting()) as Job<WriteQueueJob>[];
const giftsWithSubject = async (subject: string) =>
  Number(
    await service.db.oneFirst(
      sql.unsafe`SELECT count(*)::int FROM gifts WHERE subject = ${subject}`,
    ),
  );
const lockOf = (key: string) => lockKeyFor(service.config, service.tenant.institutionId, key);
const created = (result: WriteResult) => {
  if (!result.ok) throw new Error(`refused: ${result.status} ${result.error.code}`);
  return result.body as { id: number; subject: string };
};

beforeAll(async () => {
  service = await startTestService();
  const { config } = service;
  const target = redisTargetOf(config);
  connection = queueConnection(target, 'request');
  queues = WriteQueues.open(connection, config.QUEUE_PREFIX, config.WRITE_QUEUE_SHARDS);
  replies = new ReplyInbox(
    createRedis(target, 'blocking', {}, { shardedSubscribers: true }),
    config,
  );
  await Promise.all([queues.waitUntilReady(), replies.start()]);
  batches = new WriteBatches({
    pool: service.db,
    redis: service.redis,
    settings: config,
    queues: queues.shards,
    replies,
    writeTimeoutMs: config.WRITE_TIMEOUT_MS,
    extendedLeaseMs: leaseAfterQueuedMs(config.WRITE_TIMEOUT_MS),
  });
  queue = openWriteQueue(config, service.tenant.institutionId);
  donorId = (await newDonor(service)).id;
});

afterAll(async () => {
  resumeWorkers();
  await queue?.close();
  await replies?.close();
  await queues?.close();
  if (connection) closeQueueConnection(connection);
  await service?.close();
});

test('writes submitted in one turn are one job; each gets its own record, receipt and event', async () => {
  await pauseWorkers();
  const jobs = [
    write(gift('turn-a'), 'turn-a'),
    write(gift('turn-b')),
    write(gift('turn-c'), 'turn-c'),
    write(gift('turn-d')),
  ];
  const answers = jobs.map((job) => batches.submit(job));
  try {
    await waitFor(async () => (await waitingJobs()).length > 0, 5_000, 'the job to be queued');
    const [job, ...others] = await waitingJobs();
    expect(others).toEqual([]);
    expect(writesOf(job!.data).map((data) => data.requestId)).toEqual(
      jobs.map((data) => data.requestId),
    );
    expect(job!.data).toMatchObject({
      replyTo: replies.channelFor(
        shardOf(service.tenant.institutionId, service.config.WRITE_QUEUE_SHARDS),
      ),
    });
    // Both keys are leased while the job waits.
    expect(await service.redis.get(lockOf('turn-a'))).toMatch(/^inflight:/);
    expect(await service.redis.get(lockOf('turn-c'))).toMatch(/^inflight:/);
  } finally {
    resumeWorkers();
  }
  const results = await Promise.all(answers);
  const bodies = results.map(created);
  expect(results.map((result) => result.status)).toEqual([201, 201, 201, 201]);
  expect(bodies.map((body) => body.subject)).toEqual(['turn-a', 'turn-b', 'turn-c', 'turn-d']);
  expect(new Set(bodies.map((body) => body.id)).size).toBe(4);
  for (const subject of ['turn-a', 'turn-b', 'turn-c', 'turn-d'])
    expect(await giftsWithSubject(subject)).toBe(1);
  const events = await service.db.anyFirst(sql.unsafe`
    SELECT data->>'subject' FROM events
    WHERE institution_id = ${service.tenant.institutionId} AND type = 'gift.created'
      AND data->>'subject' LIKE 'turn-%' ORDER BY 1`);
  expect(events).toEqual(['turn-a', 'turn-b', 'turn-c', 'turn-d']);
  // The worker made both keys done in its one settle.
  expect(await service.redis.get(lockOf('turn-a'))).toMatch(/^done:/);
  expect(await service.redis.get(lockOf('turn-c'))).toMatch(/^done:/);
});

test('a key given twice in one turn: the first is queued, the same body is told 409 and another 422', async () => {
  const first = write(gift('twice'), 'twice');
  const again = write(gift('twice'), 'twice');
  const other = write(gift('twice', 99), 'twice');
  const results = await Promise.all([first, again, other].map((job) => batches.submit(job)));
  expect(results.map((result) => result.status)).toEqual([201, 409, 422]);
  expect(results.map((result) => (result.ok ? null : result.error.code))).toEqual([
    null,
    'idempotency_key_in_flight',
    'idempotency_key_request_mismatch',
  ]);
  expect(await giftsWithSubject('twice')).toBe(1);
});

test("a refused write answers alone: its key is freed, the job's other writes commit", async () => {
  const good = write(gift('mixed-good'), 'mixed-good');
  const refused = write({ ...gift('mixed-refused'), amount: -5 }, 'mixed-refused');
  const [committed, refusal] = await Promise.all([good, refused].map((job) => batches.submit(job)));
  expect(committed!.status).toBe(201);
  expect(refusal).toMatchObject({ ok: false, status: 422 });
  expect(await giftsWithSubject('mixed-good')).toBe(1);
  expect(await giftsWithSubject('mixed-refused')).toBe(0);
  expect(await service.redis.exists(lockOf('mixed-refused'))).toBe(0);
  expect(await service.redis.get(lockOf('mixed-good'))).toMatch(/^done:/);
});

test(`more than ${MAX_WRITES_PER_JOB} writes in one turn go as several jobs`, async () => {
  const count = MAX_WRITES_PER_JOB + 6;
  await pauseWorkers();
  const answers = Array.from({ length: count }, (_, index) =>
    batches.submit(write(gift(`many-${index}`))),
  );
  try {
    await waitFor(async () => (await waitingJobs()).length === 2, 5_000, 'two jobs');
    const sizes = (await waitingJobs())
      .map((job) => writesOf(job.data).length)
      .sort((a, b) => a - b);
    expect(sizes).toEqual([6, MAX_WRITES_PER_JOB]);
  } finally {
    resumeWorkers();
  }
  const results = await Promise.all(answers);
  expect(results.filter((result) => result.status === 201)).toHaveLength(count);
  expect(
    Number(
      await service.db.oneFirst(
        sql.unsafe`SELECT count(*)::int FROM gifts WHERE subject LIKE 'many-%'`,
      ),
    ),
  ).toBe(count);
});

test('retries of done keys in one turn are answered from their receipts, with no worker, each its own', async () => {
  const firsts = ['again-a', 'again-b', 'again-c'].map((key) => write(gift(key), key));
  const committed = (await Promise.all(firsts.map((job) => batches.submit(job)))).map(created);
  await pauseWorkers();
  try {
    const retries = [
      ...firsts.map((job) => ({ ...job, requestId: `${job.requestId}_retry` })),
      // The first key again with another body: a mismatch, from the same lookup.
      write(gift('again-a', 77), 'again-a'),
    ];
    const answers = await Promise.all(retries.map((job) => batches.submit(job)));
    expect(answers.map((answer) => answer.status)).toEqual([201, 201, 201, 422]);
    expect(answers.slice(0, 3).map((answer) => answer.ok && answer.replayed)).toEqual([
      true,
      true,
      true,
    ]);
    expect(answers.slice(0, 3).map((answer) => created(answer))).toEqual(committed);
    expect(answers[3]).toMatchObject({
      ok: false,
      error: { code: 'idempotency_key_request_mismatch' },
    });
    // Answered while no worker runs: nothing was queued.
    expect(await waitingJobs()).toEqual([]);
  } finally {
    resumeWorkers();
  }
  for (const subject of ['again-a', 'again-b', 'again-c'])
    expect(await giftsWithSubject(subject)).toBe(1);
});

describe('a job of one write, as API processes of the earlier release queued them', () => {
  let listener: Redis;
  const heard: string[] = [];

  beforeAll(async () => {
    listener = createRedis(
      redisTargetOf(service.config),
      'blocking',
      {},
      { shardedSubscribers: true },
    );
    listener.on('message', (_channel: string, message: string) => heard.push(message));
    listener.on('smessage', (_channel: string, message: string) => heard.push(message));
  });
  afterAll(() => listener?.disconnect());

  test("is run, and answered in that release's shape", async () => {
    const channel = `${shardPrefixFor(service.config, service.tenant.institutionId)}:replies:earlier-release`;
    await (listener.isCluster ? listener.ssubscribe(channel) : listener.subscribe(channel));
    const data = write(gift('earlier-release'));
    await queue.add(WRITE_JOB, { ...data, replyTo: channel }, { jobId: data.requestId });
    await waitFor(
      async () => (await queue.getJob(data.requestId))?.finishedOn !== undefined,
      10_000,
      'the job',
    );
    const result = (await queue.getJob(data.requestId))!.returnvalue as WriteResult;
    expect(result).toMatchObject({ ok: true, status: 201, replayed: false });
    expect(await giftsWithSubject('earlier-release')).toBe(1);
    await waitFor(() => heard.length > 0, 5_000, 'the reply');
    expect(JSON.parse(heard[0]!)).toEqual({ jobId: data.requestId, result });
  });
});
