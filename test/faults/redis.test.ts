import { RedisServer } from '../helpers/processes.js';
import { sleep, waitFor } from '../helpers/wait.js';
import {
  faultChecks,
  HANG_LIMIT_MS,
  inspect,
  recoveryTime,
  startRig,
  summary,
  type FaultReport,
  type GiftStream,
  type Rig,
} from './faultKit.js';
import { RedisProxy } from './redisProxy.js';

/** A private redis-server, so the test can kill and freeze it; AOF on, as in production. */
let redis: RedisServer;
beforeAll(async () => {
  redis = await RedisServer.start();
});
afterAll(async () => {
  await redis?.stop();
});

describe('Redis killed with SIGKILL under load, then started again on the same port', () => {
  let rig: Rig;
  let stream: GiftStream;
  let report: FaultReport;

  beforeAll(async () => {
    rig = await startRig({ env: { REDIS_URL: redis.url }, superviseApi: true });
    stream = rig.stream('redis-restart');
    stream.start();
    await stream.progress(30);

    await redis.kill();
    await sleep(2_000);
    const restarted = Date.now();
    await redis.restart();
    const recovered = await recoveryTime(stream, restarted);
    await sleep(3_000);
    await stream.stop();
    report = await inspect(rig, [stream], recovered);
    console.log(summary('Redis restart', report));
  });
  afterAll(async () => {
    await rig?.close();
  });

  faultChecks(() => report);

  test('while Redis was down the clients were told 503 and retried', () => {
    expect(stream.attempts.filter((attempt) => attempt.status === 503).length).toBeGreaterThan(0);
  });
});

describe('Redis frozen with SIGSTOP for a few seconds, then resumed', () => {
  let rig: Rig;
  let stream: GiftStream;
  let report: FaultReport;
  let frozenAt = 0;

  beforeAll(async () => {
    rig = await startRig({ env: { REDIS_URL: redis.url }, superviseApi: true });
    stream = rig.stream('redis-pause');
    stream.start();
    await stream.progress(30);

    frozenAt = Date.now();
    redis.pause();
    await sleep(4_000);
    const resumed = Date.now();
    redis.resume();
    const recovered = await recoveryTime(stream, resumed);
    await sleep(3_000);
    await stream.stop();
    report = await inspect(rig, [stream], recovered);
    console.log(summary('Redis pause', report));
  });
  afterAll(async () => {
    redis.resume();
    await rig?.close();
  });

  faultChecks(() => report);

  test('requests sent while Redis was frozen were answered, none left waiting', () => {
    const during = stream.attempts.filter(
      (attempt) => attempt.at >= frozenAt && attempt.at < frozenAt + 3_000,
    );
    expect(during.length).toBeGreaterThan(0);
    expect(during.filter((attempt) => attempt.status === null)).toEqual([]);
  });
});

describe('Redis failing one API process at a chosen command (a proxy in front of Redis)', () => {
  const shared = new URL(process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379');
  const proxy = new RedisProxy({ host: shared.hostname, port: Number(shared.port || 6379) });
  let rig: Rig;
  let warmUps = 0;

  const post = async (key: string) => {
    const started = performance.now();
    const response = await rig.postGift(key, 5);
    const body = (await response.json()) as { error?: { code?: string } };
    return {
      status: response.status,
      code: body.error?.code,
      ms: Math.round(performance.now() - started),
    };
  };

  beforeAll(async () => {
    await proxy.start();
    // The workers on the shared Redis directly (not a cluster, when the suite runs on one).
    rig = await startRig({
      env: { REDIS_URL: shared.toString() },
      apiEnv: { REDIS_URL: proxy.url },
      superviseApi: true,
    });
  });
  beforeEach(async () => {
    // Every connection of the API is up and BullMQ's scripts are loaded before the fault.
    await waitFor(
      async () => (await post(`warm-up-${(warmUps += 1)}`)).status === 201,
      15_000,
      'a write through the proxy',
    );
  });
  afterEach(async () => {
    proxy.thaw();
    await proxy.start();
  });
  afterAll(async () => {
    await rig?.close();
    await proxy.close();
  });

  test('Redis not answering the idempotency lock: 503 service_unavailable, not 500', async () => {
    proxy.freezeOn('idempotency-lock', 'now');
    const answer = await post('frozen-lock');
    expect(answer).toMatchObject({ status: 503, code: 'service_unavailable' });
  });

  test('the Redis connection dropping while a command waits: 503, not 500', async () => {
    proxy.freezeOn('idempotency-lock', 'now');
    const pending = post('dropped-lock');
    await sleep(300);
    await proxy.cut();
    expect(await pending).toMatchObject({ status: 503, code: 'service_unavailable' });
  });

  test(`Redis freezing right after the lock is taken: an answer within ${HANG_LIMIT_MS} ms`, async () => {
    proxy.freezeOn('idempotency-lock', 'afterReply');
    proxy.freezeOn(':writes:', 'now');
    const answer = await post('frozen-after-lock');
    expect(answer.ms).toBeLessThan(HANG_LIMIT_MS);
  });

  test('Redis freezing just after a job is queued does not bring the API down', async () => {
    proxy.freezeOn('queued-then-frozen', 'afterReply');
    const answer = await post('queued-then-frozen');
    expect([201, 503, 504]).toContain(answer.status);
    await sleep(3_000);
    expect(rig.crashes).toEqual([]);
  });
});
