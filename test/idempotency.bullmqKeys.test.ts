import { Queue } from 'bullmq';
import { sql } from 'slonik';
import { lockKeyFor } from '../common/idempotency/lock.js';
import { startTestService, type TestService } from './helpers/harness.js';
import { openWriteQueue } from './helpers/writeQueue.js';

/**
 * Idempotency does not depend on BullMQ's own keys: a finished job may be trimmed, removed by an
 * operator or lost, and its key still replays (common/idempotency/lock.ts).
 */

type Body = Record<string, unknown> & { id: number; error?: { code: string } };

let service: TestService;
let queue: Queue;
let donorId: number;

beforeAll(async () => {
  service = await startTestService();
  queue = openWriteQueue(service.config, service.tenant.institutionId);
  const donor = await service.call<Body>('POST', '/api/v1/donors', {
    body: { role: 'Individual', first_name: 'Mary', last_name: 'Jackson', email: 'mj@example.org' },
  });
  donorId = donor.body.id;
});
afterAll(async () => {
  await queue?.close();
  await service?.close();
});

const gift = (subject: string) => ({
  donor_id: donorId,
  amount: 75,
  subject,
  gift_date: '2026-04-01',
});
const post = (key: string, subject: string) =>
  service.call<Body>('POST', '/api/v1/gifts', {
    body: gift(subject),
    headers: { 'Idempotency-Key': key },
  });
const giftsWithSubject = async (subject: string) =>
  Number(
    await service.db.oneFirst(
      sql.unsafe`SELECT count(*)::int FROM gifts WHERE subject = ${subject}`,
    ),
  );

/** Deletes every Redis key BullMQ holds for a finished job: its hash (and sub-keys) and its entry in the completed set. */
async function deleteJobKeys(jobId: string): Promise<void> {
  const jobKey = queue.toKey(jobId);
  expect(await service.redis.exists(jobKey)).toBe(1);
  const subKeys = await service.redis.keys(`${jobKey}:*`);
  await service.redis.del(jobKey, ...subKeys);
  await service.redis.zrem(queue.toKey('completed'), jobId);
  expect(await queue.getJob(jobId)).toBeUndefined();
  expect(await service.redis.zscore(queue.toKey('completed'), jobId)).toBeNull();
}

test.each([
  ['its done marker kept: answered from the receipt by the API', false],
  ['its done marker lost too: replayed through a worker', true],
])("a retry replays after the job's BullMQ keys are deleted, %s", async (_how, dropMarker) => {
  const key = `bullmq-gone-${String(dropMarker)}`;
  const first = await post(key, key);
  expect(first.status).toBe(201);
  // The job id is the request id (api/handlers.ts).
  await deleteJobKeys(first.headers.get('request-id')!);
  if (dropMarker) {
    await service.redis.del(lockKeyFor(service.config, service.tenant.institutionId, key));
  }

  const retry = await post(key, key);
  expect(retry.status).toBe(first.status);
  expect(retry.headers.get('idempotent-replayed')).toBe('true');
  expect(retry.headers.get('location')).toBe(first.headers.get('location'));
  expect(JSON.stringify(retry.body)).toBe(JSON.stringify(first.body));
  expect(await giftsWithSubject(key)).toBe(1);

  const changed = await service.call<Body>('POST', '/api/v1/gifts', {
    body: { ...gift(key), amount: 76 },
    headers: { 'Idempotency-Key': key },
  });
  expect(changed.status).toBe(422);
  expect(changed.body.error?.code).toBe('idempotency_key_request_mismatch');
  expect(await giftsWithSubject(key)).toBe(1);
});

test("with a finished job's BullMQ keys deleted, a new key still writes exactly once", async () => {
  const earlier = await post('bullmq-gone-earlier', 'bullmq-gone-earlier');
  await deleteJobKeys(earlier.headers.get('request-id')!);

  const fresh = await post('bullmq-gone-new', 'bullmq-gone-new');
  expect(fresh.status).toBe(201);
  expect(fresh.headers.get('idempotent-replayed')).toBeNull();
  await deleteJobKeys(fresh.headers.get('request-id')!);
  const again = await post('bullmq-gone-new', 'bullmq-gone-new');
  expect(again.status).toBe(201);
  expect(again.headers.get('idempotent-replayed')).toBe('true');
  expect(again.body.id).toBe(fresh.body.id);
  expect(await giftsWithSubject('bullmq-gone-new')).toBe(1);
});
