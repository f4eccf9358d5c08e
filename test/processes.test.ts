import { sql } from 'slonik';
import { startTestService, type TestService } from './helpers/harness.js';
import { configEnv, spawnEntry, waitForLog } from './helpers/processes.js';
import { holdDonorRow } from './helpers/rowLock.js';
import { waitFor } from './helpers/wait.js';

type Body = Record<string, unknown> & { id: number };

let service: TestService;
let donorId: number;

beforeAll(async () => {
  service = await startTestService();
  const donor = await service.call<Body>('POST', '/api/v1/donors', {
    body: {
      role: 'Individual',
      first_name: 'Emmy',
      last_name: 'Noether',
      email: 'emmy@example.org',
    },
  });
  donorId = donor.body.id;
});
afterAll(async () => {
  await service?.close();
});

const gift = { amount: 40, subject: 'Held by a lock', gift_date: '2026-05-05' };

const blockedQueries = async () =>
  Number(
    await service.db.oneFirst(
      sql.unsafe`SELECT count(*)::int FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()`,
    ),
  );

describe('configuration', () => {
  test.each([
    ['api/main.js', 'CURSOR_SECRET', undefined, 'Invalid configuration: CURSOR_SECRET is required'],
    ['api/main.js', 'PORT', 'eighty', 'Invalid configuration: PORT'],
    [
      'worker/main.js',
      'DATABASE_URL',
      undefined,
      'Invalid configuration: DATABASE_URL is required',
    ],
    ['worker/main.js', 'WORKER_CONCURRENCY', '0', 'Invalid configuration: WORKER_CONCURRENCY'],
    ['api/main.js', 'RATE_LIMIT_PER_SECOND', '-1', 'Invalid configuration: RATE_LIMIT_PER_SECOND'],
    ['api/main.js', 'API_KEY_CACHE_SECONDS', '-1', 'Invalid configuration: API_KEY_CACHE_SECONDS'],
  ])('%s with %s=%s stops with one line naming it', async (entry, name, value, message) => {
    const env = configEnv(service.config);
    if (value === undefined) delete env[name];
    else env[name] = value;
    const proc = spawnEntry(entry, env);
    expect(await proc.exited).toBe(1);
    expect(proc.stderr).toHaveLength(1);
    expect(proc.stderr[0]).toContain(message);
    expect(proc.stdout).toEqual([]);
  });
});

describe('graceful shutdown', () => {
  test('SIGTERM to the API finishes the request in flight, then refuses new connections and exits 0', async () => {
    const api = spawnEntry('api/main.js', configEnv(service.config));
    const port = Number((await waitForLog(api, 'api listening')).port);
    const url = `http://127.0.0.1:${port}/api/v1/gifts`;
    const lock = await holdDonorRow(service.db, donorId);
    const inFlight = fetch(url, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        'X-Service-API-Key': service.tenant.key,
        'Idempotency-Key': 'sigterm-api',
      },
      body: JSON.stringify({ ...gift, donor_id: donorId }),
    });
    await waitFor(async () => (await blockedQueries()) > 0, 5_000, 'the write to be in flight');

    api.child.kill('SIGTERM');
    await waitForLog(api, 'api shutting down');
    await expect(fetch(`http://127.0.0.1:${port}/health`)).rejects.toThrow();
    await lock.release();

    const response = await inFlight;
    expect(response.status).toBe(201);
    expect(await api.exited).toBe(0);
    expect(await service.count('gifts')).toBe(1);
  });

  test('SIGTERM to a worker lets its running job commit before it exits 0', async () => {
    await service.workers[0]!.worker.pause();
    const worker = spawnEntry('worker/main.js', configEnv(service.config));
    await waitForLog(worker, 'worker ready');
    const lock = await holdDonorRow(service.db, donorId);
    const inFlight = service.call<Body>('POST', '/api/v1/gifts', {
      body: { ...gift, donor_id: donorId },
      headers: { 'Idempotency-Key': 'sigterm-worker' },
    });
    await waitFor(async () => (await blockedQueries()) > 0, 5_000, 'the job to be running');

    worker.child.kill('SIGTERM');
    await waitForLog(worker, 'worker shutting down');
    await lock.release();

    expect((await inFlight).status).toBe(201);
    expect(await worker.exited).toBe(0);
    expect(await service.count('gifts')).toBe(2);
    service.workers[0]!.worker.resume();
  });
});
