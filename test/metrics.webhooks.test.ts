// The operator's view of webhooks (issue 16): outbox lag and webhook queue depth on the API's
// /metrics, delivery attempts by outcome on the worker's.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { sql } from 'slonik';
import { startTestService, type TestService } from './helpers/harness.js';
import { freePort } from './helpers/processes.js';
import { created } from './helpers/responses.js';
import { waitFor } from './helpers/wait.js';

let service: TestService;
let receiver: Server;
let workerMetricsPort: number;
/** What each path of the receiver answers, in turn (then 200). */
const answers: Record<string, number[]> = { '/a': [500, 200], '/b': [410], '/c': [500, 500] };
const hits: Record<string, number> = {};
/** Each path's endpoint id. */
const endpoints: Record<string, number> = {};

beforeAll(async () => {
  receiver = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      const path = request.url ?? '';
      hits[path] = (hits[path] ?? 0) + 1;
      response.writeHead(answers[path]?.shift() ?? 200).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const { port } = receiver.address() as AddressInfo;
  workerMetricsPort = await freePort();
  service = await startTestService({
    WEBHOOK_ALLOWED_HOSTS: `127.0.0.1:${port}`,
    // A first retry at once, the second a minute later: long enough to be seen waiting.
    WEBHOOK_RETRY_SCHEDULE: '0.2,60',
    WORKER_METRICS_PORT: String(workerMetricsPort),
  });
  for (const path of Object.keys(answers))
    endpoints[path] = (
      await created<{ id: number }>(
        service.call('POST', '/api/v1/webhook-endpoints', {
          body: { url: `http://127.0.0.1:${port}${path}`, enabled_events: ['donor.created'] },
        }),
      )
    ).id;
});

afterAll(async () => {
  await service?.close();
  await new Promise((resolve) => receiver.close(resolve));
});

const scrape = async (url: string) => (await fetch(url)).text();
const apiMetrics = () => scrape(`${service.url}/metrics`);
const workerMetrics = () => scrape(`http://127.0.0.1:${workerMetricsPort}/metrics`);
const gauge = (text: string, name: string) => {
  const match = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  return match ? Number(match[1]) : null;
};

test('delivery attempts by outcome on the worker, retries waiting in the webhooks queue on the API', async () => {
  const donor = await service.call('POST', '/api/v1/donors', {
    body: { role: 'Individual', first_name: 'Ada', last_name: 'L', email: 'ada@example.org' },
  });
  expect(donor.status).toBe(201);
  const expected = [
    /webhook_delivery_attempts_total\{outcome="delivered"\} 1$/m,
    /webhook_delivery_attempts_total\{outcome="gave_up"\} 1$/m,
    /webhook_delivery_attempts_total\{outcome="failed_attempt"\} 3$/m,
  ];
  await waitFor(
    async () => {
      const text = await workerMetrics();
      return expected.every((pattern) => pattern.test(text));
    },
    10_000,
    'the attempts counted',
  );
  expect(hits).toEqual({ '/a': 2, '/b': 1, '/c': 2 });
  // /c failed twice and waits a minute for its last retry.
  const text = await apiMetrics();
  expect(text).toMatch(/^webhook_queue_jobs\{state="delayed"\} 1$/m);
  expect(text).toMatch(/^webhook_queue_jobs\{state="waiting"\} 0$/m);
});

test('outbox lag: the age of the oldest event the dispatcher has not passed, 0 once it has', async () => {
  await waitFor(
    async () => gauge(await apiMetrics(), 'webhook_outbox_lag_seconds') === 0,
    10_000,
    'no lag',
  );
  // A transaction left open, on a connection of its own, holds the dispatcher before any event
  // committed after it began.
  const open = new pg.Client({ connectionString: service.config.DATABASE_URL });
  await open.connect();
  try {
    await open.query('BEGIN');
    await open.query('SELECT pg_current_xact_id()');
    await service.db.query(sql.unsafe`
      INSERT INTO events (institution_id, type, object_type, object_id, data, created_at)
      VALUES (${service.tenant.institutionId}, 'donor.updated', 'donor', 1, '{}',
              now() - interval '120 seconds')`);
    const lag = gauge(await apiMetrics(), 'webhook_outbox_lag_seconds');
    expect(lag).toBeGreaterThanOrEqual(120);
    expect(lag).toBeLessThan(600);
  } finally {
    await open.query('COMMIT');
    await open.end();
  }
  await waitFor(
    async () => gauge(await apiMetrics(), 'webhook_outbox_lag_seconds') === 0,
    10_000,
    'caught up',
  );
});

// After the first test: /c waits a minute for its last scheduled retry.
test('a retry asked for by hand that fails is a failed attempt, not giving up: the schedule stays', async () => {
  answers['/c']!.push(500);
  const path = `/api/v1/webhook-endpoints/${endpoints['/c']}/deliveries`;
  const list = await service.call<{ data: { id: number; status: string }[] }>('GET', path);
  const [delivery] = list.body.data;
  expect(delivery?.status).toBe('pending');
  const retried = await service.call('POST', `${path}/${delivery!.id}/retry`, {
    body: {},
    headers: { 'Idempotency-Key': `manual-retry-${delivery!.id}` },
  });
  expect(retried.status).toBe(200);
  await waitFor(
    async () =>
      /webhook_delivery_attempts_total\{outcome="failed_attempt"\} 4$/m.test(await workerMetrics()),
    10_000,
    'the manual attempt counted',
  );
  expect(hits['/c']).toBe(3);
  expect(await workerMetrics()).toMatch(/webhook_delivery_attempts_total\{outcome="gave_up"\} 1$/m);
  const after = await service.call<{ data: { id: number; status: string }[] }>('GET', path);
  expect(after.body.data[0]?.status).toBe('pending');
});
