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
  type GiftStream,
  type Rig,
} from './faultKit.js';
import { openWriteQueue } from '../helpers/writeQueue.js';

describe('the API killed with SIGKILL while requests wait, then restarted on the same port', () => {
  let rig: Rig;
  let stream: GiftStream;
  let report: FaultReport;
  let waitingAtKill = 0;

  beforeAll(async () => {
    rig = await startRig();
    const { db } = rig.service;
    stream = rig.stream('api-kill');
    stream.start();
    await stream.progress(30);

    // Keep writes in flight, so that requests are waiting in the API when it dies.
    const hold = await holdDonorRow(db, rig.donorId);
    // Each job held in the worker is a request waiting in the API.
    const queue = openWriteQueue(rig.service.config, rig.service.tenant.institutionId);
    await waitFor(async () => (await heldWrites(db, queue)) >= 3, 5_000, 'requests to wait');
    waitingAtKill = await heldWrites(db, queue);
    await queue.close();
    await rig.kill(rig.api);
    await hold.release();
    await sleep(1_000);

    const restarted = Date.now();
    const [recovered] = await Promise.all([recoveryTime(stream, restarted), rig.startApi()]);
    await sleep(3_000);
    await stream.stop();
    report = await inspect(rig, [stream], recovered);
    console.log(summary('API SIGKILL', report));
  });
  afterAll(async () => {
    await rig?.close();
  });

  faultChecks(() => report);

  test('requests cut off by the kill were retried and answered from their receipts', () => {
    expect(waitingAtKill).toBeGreaterThanOrEqual(3);
    const cutOff = new Set(
      stream.attempts.filter((attempt) => attempt.status === null).map((attempt) => attempt.key),
    );
    expect(cutOff.size).toBeGreaterThanOrEqual(waitingAtKill);
    const replayed = stream.attempts.filter(
      (attempt) => cutOff.has(attempt.key) && attempt.replayed,
    );
    expect(replayed.length).toBeGreaterThanOrEqual(1);
  });
});
