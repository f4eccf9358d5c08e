// With no worker running, /ready says so (503) and a write answers 503 at once, queueing nothing
// and leaving its Idempotency-Key free; once a worker runs again, the same key writes once.
import { sql } from 'slonik';
import { startTestService, type TestService } from './helpers/harness.js';
import { created } from './helpers/responses.js';
import { sleep } from './helpers/wait.js';
import { writeQueueLocationFor } from '../common/queue.js';
import { heartbeatKeys } from '../common/workerPresence.js';

let service: TestService;
let donorId: number;

beforeAll(async () => {
  service = await startTestService();
  donorId = (
    await created<{ id: number }>(
      service.call('POST', '/api/v1/donors', {
        body: { role: 'Household', last_name: 'Present', email: 'present@example.org' },
      }),
    )
  ).id;
});

afterAll(async () => {
  await service?.close();
});

const gift = { amount: 25, subject: 'While no worker ran', gift_date: '2026-03-01' };

test('GET /ready reports the worker', async () => {
  const response = await service.call('GET', '/ready', { key: null });
  expect(response.status).toBe(200);
  expect(response.body).toEqual({ status: 'ready', database: true, redis: true, worker: true });
});

test('with no worker: /ready is 503, a write is 503 at once with nothing queued, and its key stays free', async () => {
  for (const worker of service.workers.splice(0)) await worker.close();
  // The heartbeat lives 5 s; drop it now rather than wait, then outlast the API's 2 s of trust.
  for (const key of heartbeatKeys(service.config)) await service.redis.del(key);
  await sleep(2_100);

  const ready = await service.call('GET', '/ready', { key: null });
  expect(ready.status).toBe(503);
  expect(ready.body).toMatchObject({ status: 'unavailable', worker: false });

  const started = Date.now();
  const refused = await service.call<{ error: { code: string } }>('POST', '/api/v1/gifts', {
    body: { ...gift, donor_id: donorId },
    headers: { 'Idempotency-Key': 'no-worker-1' },
  });
  // At once, not after waiting out WRITE_TIMEOUT_MS for a worker (the bound leaves room for a
  // loaded machine).
  expect(Date.now() - started).toBeLessThan(service.config.WRITE_TIMEOUT_MS / 2);
  expect(refused.status).toBe(503);
  expect(refused.headers.get('Retry-After')).toBe('1');
  expect(refused.headers.get('Should-Retry')).toBe('true');
  expect(refused.body.error.code).toBe('service_unavailable');
  expect(await service.count('gifts')).toBe(0);
  const { QUEUE_PREFIX, WRITE_QUEUE_SHARDS } = service.config;
  const writes = writeQueueLocationFor(
    QUEUE_PREFIX,
    WRITE_QUEUE_SHARDS,
    service.tenant.institutionId,
  );
  const waiting = await service.redis.llen(`${writes.prefix}:${writes.name}:wait`);
  expect(waiting).toBe(0);

  // Dry runs need no worker.
  const dry = await service.call('POST', '/api/v1/gifts?dry_run=true', {
    body: { ...gift, donor_id: donorId },
  });
  expect(dry.status).toBe(201);

  await service.startWorker();
  expect((await service.call('GET', '/ready', { key: null })).status).toBe(200);
  const written = await service.call('POST', '/api/v1/gifts', {
    body: { ...gift, donor_id: donorId },
    headers: { 'Idempotency-Key': 'no-worker-1' },
  });
  expect(written.status).toBe(201);
  expect(
    await service.db.oneFirst(
      sql.unsafe`SELECT count(*)::int FROM gifts WHERE donor_id = ${donorId}`,
    ),
  ).toBe(1);
});
