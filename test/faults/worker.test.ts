import { Queue, QueueEvents } from 'bullmq';
import { WRITE_QUEUE } from '../../common/queue.js';
import { redisOptions } from '../../common/redis.js';
import { sleep, waitFor } from '../helpers/wait.js';
import {
  heldJobs,
  faultChecks,
  holdDonorRow,
  inspect,
  recoveryTime,
  startRig,
  summary,
  type FaultReport,
  type Rig,
} from './faultKit.js';

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
    queue = new Queue(WRITE_QUEUE, {
      connection: redisOptions(config.REDIS_URL, 'blocking'),
      prefix: config.QUEUE_PREFIX,
    });
    const stream = rig.stream('sigkill');
    stream.start();
    await stream.progress(30);

    // Keep the worker's writes inside their transactions, so the kill lands mid-job.
    const hold = await holdDonorRow(db, rig.donorId);
    await waitFor(async () => (await heldJobs(db, queue)) >= 3, 5_000, 'writes in the worker');
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
    expect(activeAtKill.length).toBeGreaterThanOrEqual(3);
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
    events = new QueueEvents(WRITE_QUEUE, {
      connection: redisOptions(config.REDIS_URL, 'blocking'),
      prefix: config.QUEUE_PREFIX,
    });
    events.on('stalled', ({ jobId }) => stalled.push(jobId));
    await events.waitUntilReady();
    const stream = rig.stream('sigstop');
    stream.start();
    await stream.progress(30);

    // The first worker holds jobs in their transactions; a second one joins; the first freezes.
    const hold = await holdDonorRow(db, rig.donorId);
    const queue = new Queue(WRITE_QUEUE, {
      connection: redisOptions(config.REDIS_URL, 'blocking'),
      prefix: config.QUEUE_PREFIX,
    });
    await waitFor(async () => (await heldJobs(db, queue)) >= 3, 5_000, 'writes in the worker');
    await queue.close();
    await rig.startWorker();
    const frozen = rig.workers[0]!;
    frozen.child.kill('SIGSTOP');
    const frozenAt = Date.now();
    await hold.release();
    await waitFor(() => stalled.length > 0, 15_000, 'the second worker to take the jobs over');
    await sleep(500);
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
