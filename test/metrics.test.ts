import { sql } from 'slonik';
import { purgeExpiredReceipts } from '../common/idempotency/receipts.js';
import { startTestService, type TestService } from './helpers/harness.js';
import { freePort } from './helpers/processes.js';
import { sleep } from './helpers/wait.js';

let service: TestService;
let workerMetricsPort: number;

beforeAll(async () => {
  workerMetricsPort = await freePort();
  service = await startTestService({
    IDEMPOTENCY_TTL_SECONDS: '1',
    METRICS_TOKEN: 'metrics-token-for-tests',
    WORKER_METRICS_PORT: String(workerMetricsPort),
  });
});
afterAll(async () => {
  await service?.close();
});

const scrape = async (token: string | null = 'metrics-token-for-tests') => {
  const response = await fetch(`${service.url}/metrics`, {
    headers: token ? { Authorization: `Bearer ${token}` } : {},
  });
  return {
    status: response.status,
    type: response.headers.get('content-type'),
    text: await response.text(),
  };
};

const user = { email: 'officer@example.org', first_name: 'Olive', last_name: 'Officer' };

test('GET /metrics reports requests by route and status, idempotency outcomes, queue and pool', async () => {
  const post = () =>
    service.call('POST', '/api/v1/users', {
      body: user,
      headers: { 'Idempotency-Key': 'metrics-1' },
    });
  expect((await post()).status).toBe(201);
  const replay = await post();
  // The status too, so that a failure says what came instead of the replay.
  expect({ status: replay.status, replayed: replay.headers.get('idempotent-replayed') }).toEqual({
    status: 201,
    replayed: 'true',
  });
  await service.call('GET', '/api/v1/users/999');

  const metrics = await scrape();
  expect(metrics.status).toBe(200);
  expect(metrics.type).toContain('text/plain');
  expect(metrics.text).toMatch(
    /http_requests_total\{method="POST",route="\/api\/v1\/users",status="201"\} 2/,
  );
  expect(metrics.text).toMatch(
    /http_requests_total\{method="GET",route="\/api\/v1\/users\/:id",status="404"\} 1/,
  );
  expect(metrics.text).toMatch(
    /http_request_duration_seconds_bucket\{le="0.5",method="POST",route="\/api\/v1\/users",status="201"\} 2/,
  );
  expect(metrics.text).toMatch(/idempotency_outcomes_total\{outcome="replayed"\} 1/);
  expect(metrics.text).toMatch(/write_queue_jobs\{state="waiting"\} 0/);
  expect(metrics.text).toMatch(/db_pool_connections\{state="idle"\} \d+/);
});

const queuedWrites = async () => {
  const { text } = await scrape();
  return {
    jobs: Number(/write_job_writes_count (\d+)/.exec(text)?.[1]),
    writes: Number(/write_job_writes_sum (\d+)/.exec(text)?.[1]),
  };
};

test("a worker's /metrics reports write wait and run time and the creates each statement committed; the API's, the writes per job", async () => {
  const before = await queuedWrites();
  const donor = await service.call<{ id: number }>('POST', '/api/v1/donors', {
    body: { role: 'Individual', first_name: 'Grace', last_name: 'Hopper' },
    headers: { 'Idempotency-Key': 'metrics-donor' },
  });
  const gifts = await Promise.all(
    [1, 2, 3].map((n) =>
      service.call('POST', '/api/v1/gifts', {
        body: { donor_id: donor.body.id, amount: n, subject: 'Metrics', gift_date: '2026-01-01' },
      }),
    ),
  );
  expect(gifts.map((gift) => gift.status)).toEqual([201, 201, 201]);
  const text = await (await fetch(`http://127.0.0.1:${workerMetricsPort}/metrics`)).text();
  expect(text).toMatch(/write_job_wait_seconds_count\{command="gifts.create"\} 3/);
  expect(text).toMatch(/write_job_run_seconds_count\{command="gifts.create",status="201"\} 3/);
  // Three gifts, in one to three statements depending on how they met in the worker.
  const statements = Number(/write_creates_per_statement_count (\d+)/.exec(text)?.[1]);
  const creates = Number(/write_creates_per_statement_sum (\d+)/.exec(text)?.[1]);
  expect(creates).toBe(3);
  expect(statements).toBeGreaterThanOrEqual(1);
  expect(statements).toBeLessThanOrEqual(3);
  // A donor, then three gifts sent at once: in one to three jobs, as they reached the API.
  const after = await queuedWrites();
  expect(after.writes - before.writes).toBe(4);
  expect(after.jobs - before.jobs).toBeGreaterThanOrEqual(2);
  expect(after.jobs - before.jobs).toBeLessThanOrEqual(4);
});

test('with METRICS_TOKEN set, /metrics needs the bearer token', async () => {
  expect((await scrape(null)).status).toBe(401);
  expect((await scrape('wrong-token-wrong-token')).status).toBe(401);
});

test('the sweeper purges expired receipts and keeps live ones', async () => {
  await service.call('POST', '/api/v1/users', {
    body: { ...user, email: 'old@example.org' },
    headers: { 'Idempotency-Key': 'soon-expired' },
  });
  await sleep(1_100);
  await service.call('POST', '/api/v1/users', {
    body: { ...user, email: 'new@example.org' },
    headers: { 'Idempotency-Key': 'still-live' },
  });
  const purged = await purgeExpiredReceipts(service.db);
  expect(purged).toBeGreaterThanOrEqual(1);
  const keys = await service.db.anyFirst(
    sql.unsafe`SELECT key FROM write_receipts WHERE source = 'client'`,
  );
  expect(keys).toContain('still-live');
  expect(keys).not.toContain('soon-expired');
});
