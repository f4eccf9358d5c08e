import type { Job, Queue, QueueEvents } from 'bullmq';
import { sql } from 'slonik';
import { lockKeyFor } from '../../common/idempotency/lock.js';
import { sleep, waitFor } from '../helpers/wait.js';
import {
  heldWrites,
  faultChecks,
  holdDonorRow,
  inspect,
  recoveryTime,
  startRig,
  summary,
  type FaultReport,
  type KeyResult,
  type Rig,
} from './faultKit.js';
import { RedisProxy } from './redisProxy.js';
import { activeWriteWithKey, openWriteQueue, openWriteQueueEvents } from '../helpers/writeQueue.js';
import { writesOf, type WriteQueueJob, type WriteSummary } from '../../common/queue.js';

type Body = Record<string, unknown> & { id: number };

/** Short, so that a silent worker's jobs move to another within seconds. */
const LOCK_DURATION_MS = 2_000;

describe('a worker killed with SIGKILL while jobs are active, then restarted', () => {
  let rig: Rig;
  let queue: Queue;
  let report: FaultReport;
  let activeAtKill: string[] = [];
  let finalStates: string[] = [];

  beforeAll(async () => {
    rig = await startRig({ env: { WORKER_LOCK_DURATION_MS: String(LOCK_DURATION_MS) } });
    const { db, config } = rig.service;
    queue = openWriteQueue(config, rig.service.tenant.institutionId);
    const stream = rig.stream('sigkill');
    stream.start();
    await stream.progress(30);

    // Keep the worker's writes inside their transactions, so the kill lands mid-job.
    const hold = await holdDonorRow(db, rig.donorId);
    await waitFor(async () => (await heldWrites(db, queue)) >= 3, 5_000, 'writes in the worker');
    activeAtKill = (await queue.getActive()).map((job) => job.id ?? '');
    await rig.kill(rig.workers[0]!);
    await hold.release();
    await sleep(1_000);

    const restarted = Date.now();
    const [recovered] = await Promise.all([recoveryTime(stream, restarted), rig.startWorker()]);
    await sleep(3_000);
    await stream.stop();
    const states = () => Promise.all(activeAtKill.map((id) => queue.getJobState(id)));
    await waitFor(
      async () => (await states()).every((state) => state === 'completed'),
      10_000,
      'the redelivered jobs to complete',
    ).catch(() => {});
    finalStates = await states();
    report = await inspect(rig, [stream], recovered);
    console.log(summary('worker SIGKILL', report));
  });
  afterAll(async () => {
    await queue?.close();
    await rig?.close();
  });

  faultChecks(() => report);

  test('the jobs the killed worker held were delivered again and completed', () => {
    expect(activeAtKill.length).toBeGreaterThanOrEqual(1);
    expect(finalStates).toEqual(activeAtKill.map(() => 'completed'));
  });
});

describe('a worker frozen with SIGSTOP past its lock duration, then resumed', () => {
  let rig: Rig;
  let events: QueueEvents;
  let report: FaultReport;
  const stalled: string[] = [];
  let frozenFor = 0;

  beforeAll(async () => {
    rig = await startRig({ env: { WORKER_LOCK_DURATION_MS: String(LOCK_DURATION_MS) } });
    const { db, config } = rig.service;
    events = openWriteQueueEvents(config, rig.service.tenant.institutionId);
    events.on('stalled', ({ jobId }) => stalled.push(jobId));
    await events.waitUntilReady();
    const stream = rig.stream('sigstop');
    stream.start();
    await stream.progress(30);

    // The first worker holds jobs in their transactions; a second one joins; the first freezes.
    const hold = await holdDonorRow(db, rig.donorId);
    const queue = openWriteQueue(config, rig.service.tenant.institutionId);
    await waitFor(async () => (await heldWrites(db, queue)) >= 3, 5_000, 'writes in the worker');
    await queue.close();
    await rig.startWorker();
    const frozen = rig.workers[0]!;
    frozen.child.kill('SIGSTOP');
    const frozenAt = Date.now();
    await hold.release();
    await waitFor(() => stalled.length > 0, 15_000, 'the second worker to take the jobs over');
    // The lock was last renewed up to half its duration before the freeze, so the takeover may
    // come before a full lock duration has passed: stay frozen past it either way.
    await sleep(Math.max(500, frozenAt + LOCK_DURATION_MS + 250 - Date.now()));
    frozen.child.kill('SIGCONT');
    const resumed = Date.now();
    frozenFor = resumed - frozenAt;

    const recovered = await recoveryTime(stream, resumed);
    await sleep(3_000);
    await stream.stop();
    report = await inspect(rig, [stream], recovered);
    console.log(summary('worker SIGSTOP', report) + `, frozen for ${frozenFor} ms`);
  });
  afterAll(async () => {
    await events?.close();
    await rig?.close();
  });

  faultChecks(() => report);

  test('the frozen worker stayed silent past its lock and its jobs were taken over', () => {
    expect(frozenFor).toBeGreaterThan(LOCK_DURATION_MS);
    expect(stalled.length).toBeGreaterThan(0);
  });
});

describe('a worker killed with SIGKILL after its write committed, before the job completed', () => {
  const key = 'committed-then-killed';
  let proxy: RedisProxy;
  let rig: Rig;
  let queue: Queue;
  let first: { status: number; body: Body; requestId: string | null };
  let again: { status: number; body: Body; replayed: string | null };
  let rerun: WriteSummary | undefined;

  const post = async () => {
    const response = await rig.postGift(key, 5);
    return { response, body: (await response.json()) as Body };
  };

  beforeAll(async () => {
    const redisUrl = new URL(process.env.TEST_REDIS_URL!);
    proxy = new RedisProxy({ host: redisUrl.hostname, port: Number(redisUrl.port || 6379) });
    await proxy.start();
    // The workers reach Redis through the proxy, the API directly.
    rig = await startRig({
      env: { REDIS_URL: proxy.url, WORKER_LOCK_DURATION_MS: String(LOCK_DURATION_MS) },
      apiEnv: { REDIS_URL: redisUrl.toString() },
    });
    const { db, config, tenant } = rig.service;
    queue = openWriteQueue(config, tenant.institutionId, redisUrl.toString());

    // The worker's first Redis command after the commit settles the key's lease: Redis runs it
    // (and the reply to the API that follows), but the worker never hears back, so the job stays
    // active with its write committed, and the worker dies there.
    proxy.freezeOn(lockKeyFor(config, tenant.institutionId, key), 'now');
    const { response, body } = await post();
    first = { status: response.status, body, requestId: response.headers.get('request-id') };
    await waitFor(
      async () =>
        (await db.oneFirst(sql.unsafe`SELECT count(*)::int FROM gifts WHERE subject = ${key}`)) ===
        1,
      5_000,
      'the write to commit',
    );
    const { job, index } = (await activeWriteWithKey(queue, key))!;
    await rig.kill(rig.workers[0]!);
    proxy.thaw();
    await rig.startWorker();
    await waitFor(
      async () => (await queue.getJobState(job.id!)) === 'completed',
      15_000,
      'the job to run again',
    );
    const results = (await queue.getJob(job.id!))?.returnvalue as WriteSummary[] | undefined;
    rerun = results?.[index];
    const retry = await post();
    again = {
      status: retry.response.status,
      body: retry.body,
      replayed: retry.response.headers.get('idempotent-replayed'),
    };
  });
  afterAll(async () => {
    await queue?.close();
    await rig?.close();
    await proxy?.close();
  });

  test('the client had its answer; the killed job ran again, as a replay of the committed write', () => {
    expect(first.status).toBe(201);
    expect(rerun).toEqual({ requestId: first.requestId, status: 201, replayed: true });
    expect(again.status).toBe(201);
    expect(again.replayed).toBe('true');
    expect(again.body).toEqual(first.body);
  });

  test('the write has exactly one gift row and one event, made by the first request', async () => {
    const { db } = rig.service;
    const gifts = await db.anyFirst(sql.unsafe`SELECT id FROM gifts WHERE subject = ${key}`);
    expect(gifts).toEqual([again.body.id]);
    const events = await db.any(sql.unsafe`
      SELECT type, object_id, request_id, data::text AS data FROM events
      WHERE object_type = 'gift' AND object_id = ${again.body.id}`);
    expect(events).toEqual([
      {
        type: 'gift.created',
        object_id: again.body.id,
        request_id: first.requestId,
        data: JSON.stringify(again.body),
      },
    ]);
  });
});

describe('a worker killed with SIGKILL under the default settings, restarted by its supervisor', () => {
  /** The most the last of the killed worker's writes may take to reach its client, from the kill. */
  const RECOVERY_TARGET_MS = 15_000;
  const WRITES = 30;
  let rig: Rig;
  let results: KeyResult[] = [];
  let heldAtKill = 0;
  let queuedAtKill = 0;
  let recoveredInMs = 0;
  let report: FaultReport;

  beforeAll(async () => {
    // No WORKER_LOCK_DURATION_MS or WRITE_TIMEOUT_MS of the test's own: what a user runs.
    rig = await startRig({ defaultWriteTimeout: true });
    const { db, config, tenant } = rig.service;
    const queue = openWriteQueue(config, tenant.institutionId);
    // Clients that keep retrying the same key until it is written, however long that takes.
    const stream = rig.stream('default-sigkill', 0, 120_000);

    // The writes wait for the donor row inside the worker's transactions, or in the queue behind
    // them, until the kill.
    const hold = await holdDonorRow(db, rig.donorId);
    const answeredAt: number[] = [];
    const writes = Array.from({ length: WRITES }, (_, index) =>
      stream.write(`default-sigkill-${index}`).then((result) => {
        answeredAt.push(Date.now());
        return result;
      }),
    );
    // The worker takes as many jobs as its concurrency allows; the other writes wait in the queue.
    const queued = async () =>
      (await queue.getJobs(['active', 'waiting'])).reduce(
        (count, job) => count + writesOf((job as Job<WriteQueueJob>).data).length,
        0,
      );
    await waitFor(
      async () => (await heldWrites(db, queue)) > 0 && (await queued()) === WRITES,
      10_000,
      'the writes in the worker and its queue',
    );
    heldAtKill = await heldWrites(db, queue);
    queuedAtKill = await queued();
    await queue.close();

    const killedAt = Date.now();
    await rig.kill(rig.workers[0]!);
    await Promise.all([hold.release(), rig.startWorker()]);
    results = await Promise.all(writes);
    recoveredInMs = Math.max(...answeredAt) - killedAt;
    report = await inspect(rig, [stream], recoveredInMs);
    console.log(
      summary('worker SIGKILL, default settings', report) +
        `\nthe last of ${WRITES} in-flight writes (${heldAtKill} in the killed worker's jobs) had its 201 ${recoveredInMs} ms after the kill`,
    );
  });
  afterAll(async () => {
    await rig?.close();
  });

  test(`every one of the ${WRITES} in-flight writes has its 201 within 15 s of the kill`, () => {
    expect(heldAtKill).toBeGreaterThan(0);
    expect(queuedAtKill).toBe(WRITES);
    expect(results.map((result) => result.status)).toEqual(results.map(() => 201));
    expect(recoveredInMs).toBeLessThan(RECOVERY_TARGET_MS);
  });

  test('each write committed exactly once: one gift row, the one its answer named, one event', async () => {
    expect(report.duplicated).toEqual([]);
    expect(report.lost).toEqual([]);
    expect(report.wrongEvents).toEqual([]);
    expect(report.withoutReceipt).toEqual([]);
    const subjects = await rig.service.db.anyFirst(
      sql.unsafe`SELECT subject FROM gifts WHERE institution_id = ${rig.service.tenant.institutionId}`,
    );
    expect([...subjects].sort()).toEqual(results.map((result) => result.key).sort());
  });

  test('the clients saw only answers they retry until the 201, and no process crashed', () => {
    expect(report.undocumented).toEqual([]);
    expect(report.crashes).toEqual([]);
  });
});
