import { Queue } from 'bullmq';
import { sql } from 'slonik';
import { lockKeyFor } from '../common/idempotency/lock.js';
import { redisOptions } from '../common/redis.js';
import { startTestService, type TestService } from './helpers/harness.js';
import {
  configEnv,
  killProcess,
  startEntry,
  waitForLog,
  type ServiceProcess,
} from './helpers/processes.js';
import { givingYearsDrift } from './helpers/givingYears.js';
import { holdDonorRow } from './helpers/rowLock.js';
import { sleep, waitFor } from './helpers/wait.js';
import { queueLocation } from '../common/queueShards.js';
import { openWriteQueue } from './helpers/writeQueue.js';

type Body = Record<string, unknown> & { id: number; error?: { code: string } };

/** The API's in-flight lock on a key lives WRITE_TIMEOUT_MS * 3 (api/writeGateway.ts). */
const WRITE_TIMEOUT_MS = 1_000;
const LEASE_MS = WRITE_TIMEOUT_MS * 3;

let service: TestService;
let donorId: number;
const spawned: ServiceProcess[] = [];

beforeAll(async () => {
  service = await startTestService({ WRITE_TIMEOUT_MS: String(WRITE_TIMEOUT_MS) });
  const donor = await service.call<Body>('POST', '/api/v1/donors', {
    body: { role: 'Individual', first_name: 'Ada', last_name: 'Byron', email: 'ada@example.org' },
  });
  donorId = donor.body.id;
});
afterAll(async () => {
  await Promise.all(spawned.map((proc) => killProcess(proc)));
  await service?.close();
});

const gift = (subject: string) => ({
  donor_id: donorId,
  amount: 30,
  subject,
  gift_date: '2026-03-03',
});

/** An API process of the test service's own, to be killed mid-request. */
async function spawnApi(): Promise<{ proc: ServiceProcess; url: string }> {
  const proc = await startEntry('api/main.js', configEnv(service.config));
  spawned.push(proc);
  const { port } = (await waitForLog(proc, 'api listening')) as { port: number };
  return { proc, url: `http://127.0.0.1:${port}` };
}

const postTo = (url: string, key: string, subject: string) =>
  fetch(`${url}/api/v1/gifts`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      'X-Service-API-Key': service.tenant.key,
      'Idempotency-Key': key,
    },
    body: JSON.stringify(gift(subject)),
  });

const giftsWithSubject = async (subject: string) =>
  Number(
    await service.db.oneFirst(
      sql.unsafe`SELECT count(*)::int FROM gifts WHERE subject = ${subject}`,
    ),
  );

/**
 * Takes a key's lock through a spawned API process (with no worker taking the job), kills the
 * process, and drops its queued job, as if it had died before queueing it. Returns when the
 * lock was seen taken.
 */
async function orphanLock(key: string, lockKey: string): Promise<number> {
  const api = await spawnApi();
  const cutOff = postTo(api.url, key, key).catch((error: unknown) => error);
  await waitFor(async () => (await service.redis.exists(lockKey)) === 1, 5_000, 'the lock');
  const lockedAt = Date.now();
  await killProcess(api.proc);
  expect(String(await cutOff)).toContain('fetch failed');
  const queue = openWriteQueue(service.config, service.tenant.institutionId);
  await queue.drain();
  await queue.close();
  return lockedAt;
}

test('an idempotency lock whose API process died before queueing frees the key a second later', async () => {
  const key = 'held-by-the-dead';
  const lockKey = lockKeyFor(service.config, service.tenant.institutionId, key);
  const worker = service.workers[0]!.worker;
  await worker.pause();
  const lockedAt = await orphanLock(key, lockKey).finally(() => worker.resume());

  const lease = await service.redis.pttl(lockKey);
  expect(lease).toBeGreaterThan(0);
  expect(lease).toBeLessThanOrEqual(LEASE_MS);
  const retry = () =>
    service.call<Body>('POST', '/api/v1/gifts', {
      body: gift(key),
      headers: { 'Idempotency-Key': key },
    });
  let answer = await retry();
  while (answer.status === 409 && Date.now() - lockedAt < LEASE_MS + 2_000) {
    expect(answer.body.error?.code).toBe('idempotency_key_in_flight');
    await sleep(100);
    answer = await retry();
  }
  const freedAfter = Date.now() - lockedAt;
  expect(answer.status).toBe(201);
  // Its job never arrived, so the next caller frees the key once the lease is a second old
  // (common/idempotency/lock.ts), well before the lease would have run out.
  expect(freedAfter).toBeGreaterThanOrEqual(900);
  expect(freedAfter).toBeLessThan(LEASE_MS);
  expect(await giftsWithSubject(key)).toBe(1);
});

test('a write whose API process answered 504 and then died still commits once, and replays through another API', async () => {
  const api = await spawnApi();
  const key = 'outlived-its-waiter';
  const hold = await holdDonorRow(service.db, donorId);

  try {
    const started = Date.now();
    const timedOut = await postTo(api.url, key, key);
    expect(timedOut.status).toBe(504);
    expect(((await timedOut.json()) as Body).error?.code).toBe('write_timeout');
    // The donor stays held until the finally below, so without its timeout the API would wait
    // for good; the margin is for a loaded CI machine.
    expect(Date.now() - started).toBeLessThan(WRITE_TIMEOUT_MS + 4_000);
    await killProcess(api.proc);
    expect(await giftsWithSubject(key)).toBe(0);
  } finally {
    await hold.release();
  }

  let replay = await service.call<Body>('POST', '/api/v1/gifts', {
    body: gift(key),
    headers: { 'Idempotency-Key': key },
  });
  await waitFor(
    async () => {
      replay = await service.call<Body>('POST', '/api/v1/gifts', {
        body: gift(key),
        headers: { 'Idempotency-Key': key },
      });
      return replay.status === 201;
    },
    5_000,
    'the abandoned write to finish',
  );
  expect(replay.headers.get('idempotent-replayed')).toBe('true');
  expect(await giftsWithSubject(key)).toBe(1);
  const stored = await service.db.oneFirst(sql.unsafe`SELECT id FROM gifts WHERE subject = ${key}`);
  expect(replay.body.id).toBe(stored);
});

describe('the maintenance: the expired-receipt sweeper and the giving years', () => {
  const maintenance = () =>
    new Queue('maintenance', {
      connection: redisOptions(service.config.REDIS_URL!, 'blocking'),
      ...queueLocation(service.config.QUEUE_PREFIX, 'maintenance'),
    });

  test('is scheduled once, every 10 minutes (the giving years every 30 seconds), however many workers run', async () => {
    const queue = maintenance();
    const schedulers = async () =>
      (await queue.getJobSchedulers()).sort((a, b) => a.key.localeCompare(b.key));
    try {
      const expected = [
        expect.objectContaining({ key: 'purge-expired-receipts', every: 10 * 60_000 }),
        expect.objectContaining({ key: 'rebuild-giving-years', every: 30_000 }),
      ];
      expect(await schedulers()).toEqual(expected);
      await service.startWorker();
      expect(await schedulers()).toEqual(expected);
      const [sweeper] = await schedulers();
      expect(sweeper!.next! - Date.now()).toBeLessThanOrEqual(10 * 60_000);
    } finally {
      await queue.close();
    }
  });

  test('a worker process runs it when first scheduled: expired receipts go, live ones stay', async () => {
    await service.db.query(sql.unsafe`
      INSERT INTO write_receipts (institution_id, source, key, fingerprint, status_code,
                                  response_body, expires_at)
      VALUES (${service.tenant.institutionId}, 'client', 'long-expired', 'f', 201, '{}',
              now() - interval '1 hour'),
             (${service.tenant.institutionId}, 'client', 'still-live', 'f', 201, '{}',
              now() + interval '1 hour')`);
    // A deployment of its own (a fresh queue prefix) schedules the sweeper anew, due at once.
    const prefix = `${service.config.QUEUE_PREFIX}-sweep`;
    const worker = await startEntry(
      'worker/main.js',
      configEnv(service.config, { QUEUE_PREFIX: prefix }),
    );
    try {
      const run = await waitForLog(worker, 'expired idempotency receipts purged');
      expect(run.purged).toBeGreaterThanOrEqual(1);
    } finally {
      await killProcess(worker, 'SIGTERM');
      const keys = await service.redis.keys(`${prefix}:*`);
      if (keys.length) await service.redis.del(...keys);
    }
    const keys = await service.db.anyFirst(
      sql.unsafe`SELECT key FROM write_receipts WHERE key IN ('long-expired', 'still-live')`,
    );
    expect(keys).toEqual(['still-live']);
  });

  test('a worker process builds the giving years again for an institution whose fiscal year start changed', async () => {
    const tenant = await service.createTenant();
    const donor = await service.call<{ id: number }>('POST', '/api/v1/donors', {
      key: tenant.key,
      body: {
        role: 'Individual',
        first_name: 'Fiscal',
        last_name: 'July',
        email: 'july@example.org',
      },
    });
    expect(donor.status).toBe(201);
    for (const gift_date of ['2026-06-30', '2026-07-01']) {
      const gift = await service.call('POST', '/api/v1/gifts', {
        key: tenant.key,
        body: { donor_id: donor.body.id, amount: 40, subject: 'Either side of July', gift_date },
      });
      expect(gift.status).toBe(201);
    }
    const changed = await service.call('PATCH', '/api/v1/institution', {
      key: tenant.key,
      body: { fiscal_year_start_month: 7 },
    });
    expect(changed.status).toBe(200);
    const recorded = () =>
      service.db.oneFirst(sql.unsafe`
        SELECT giving_years_start_month FROM institutions WHERE id = ${tenant.institutionId}`);
    expect(await recorded()).toBe(1);
    const prefix = `${service.config.QUEUE_PREFIX}-years`;
    const worker = await startEntry(
      'worker/main.js',
      configEnv(service.config, { QUEUE_PREFIX: prefix }),
    );
    try {
      // This worker runs the job when first scheduled; the suite's own worker may run it first.
      await waitFor(async () => (await recorded()) === 7, 20_000, 'the years built again');
    } finally {
      await killProcess(worker, 'SIGTERM');
      const keys = await service.redis.keys(`${prefix}:*`);
      if (keys.length) await service.redis.del(...keys);
    }
    expect(await givingYearsDrift(service.db, tenant.institutionId)).toEqual([]);
    // The two gifts, one fiscal year apart now: FY2026 ends on 30 June, FY2027 starts on 1 July.
    expect(
      await service.db.anyFirst(sql.unsafe`
        SELECT fiscal_year FROM giving_years
        WHERE institution_id = ${tenant.institutionId} AND level = 'donor' ORDER BY 1`),
    ).toEqual([2026, 2027]);
  });
});
