import { sql } from 'slonik';
import { purgeExpiredReceipts } from '../common/idempotency/receipts.js';
import { startTestService, type TestService } from './helpers/harness.js';
import { sleep } from './helpers/wait.js';

let service: TestService;

beforeAll(async () => {
  service = await startTestService({
    IDEMPOTENCY_TTL_SECONDS: '1',
    METRICS_TOKEN: 'metrics-token-for-tests',
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
  expect((await post()).headers.get('idempotent-replayed')).toBe('true');
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
