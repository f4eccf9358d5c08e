// The operator CLI's webhook commands: `webhooks failing` and `webhooks replay`.
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { sql } from 'slonik';
import { z } from 'zod';
import { startTestService, type Tenant, type TestService } from './helpers/harness.js';
import { created } from './helpers/responses.js';
import { waitFor } from './helpers/wait.js';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

const adminJs = path.resolve(process.cwd(), 'dist/cli/admin.js');

let service: TestService;
let other: Tenant;
let receiver: Server;
let port = 0;
/** Webhook ids received, by path; `/down` answers 503, anything else 204. */
const received: Record<string, string[]> = {};

beforeAll(async () => {
  receiver = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      const where = request.url ?? '';
      (received[where] ??= []).push(String(request.headers['webhook-id']));
      response.writeHead(where === '/down' ? 503 : 204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  port = (receiver.address() as AddressInfo).port;
  service = await startTestService({
    WEBHOOK_ALLOWED_HOSTS: `127.0.0.1:${port}`,
    WEBHOOK_RETRY_SCHEDULE: '0.1,0.1',
  });
  other = await service.createTenant('Other College', 'USD');
});

afterAll(async () => {
  await service?.close();
  await new Promise((resolve) => receiver.close(resolve));
});

/** The built CLI (npm test builds first), run as the operator runs it, on this file's database. */
function admin(...args: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [adminJs, ...args], {
      env: { ...process.env, DATABASE_URL: service.config.DATABASE_URL },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

function json<T>(run: Run): T {
  expect({ code: run.code, lines: run.stdout.trimEnd().split('\n').length }).toEqual({
    code: 0,
    lines: 1,
  });
  return JSON.parse(run.stdout) as T;
}

function oneLineFailure(run: Run, mentions: RegExp): void {
  expect(run.code).toBe(1);
  expect(run.stdout).toBe('');
  expect(run.stderr.trimEnd().split('\n')).toHaveLength(1);
  expect(run.stderr).toMatch(mentions);
}

const endpoint = (where: string, key?: string) =>
  created<{ id: number }>(
    service.call('POST', '/api/v1/webhook-endpoints', {
      key,
      body: { url: `http://127.0.0.1:${port}${where}`, enabled_events: ['donor.created'] },
    }),
  );

const newDonor = (key?: string) =>
  created<{ id: number }>(
    service.call('POST', '/api/v1/donors', {
      key,
      body: { role: 'Individual', first_name: 'Ada', last_name: `L${Math.random()}` },
      headers: { 'Idempotency-Key': `donor-${Math.random()}` },
    }),
  );

const donorEvent = (donorId: number, institutionId = service.tenant.institutionId) =>
  service.db.oneFirst(sql.type(z.object({ id: z.string() }))`
    SELECT id FROM events WHERE institution_id = ${institutionId} AND type = 'donor.created'
      AND object_id = ${donorId}`);

test('webhooks failing lists endpoints with recent failed attempts: institution, url, consecutive failures, last error, status', async () => {
  const down = await endpoint('/down');
  const up = await endpoint('/up');
  await newDonor();
  await newDonor();
  // Two deliveries to /down, three attempts each (two retries), all failed.
  await waitFor(() => (received['/down'] ?? []).length === 6, 10_000, 'six failed attempts');
  await waitFor(() => (received['/up'] ?? []).length === 2, 10_000, 'two deliveries');
  await waitFor(
    async () =>
      (await service.db.oneFirst(sql.type(z.object({ count: z.number() }))`
        SELECT count(*)::int FROM webhook_delivery_attempts a
        JOIN webhook_deliveries d ON d.institution_id = a.institution_id AND d.id = a.delivery_id
        WHERE d.endpoint_id = ${down.id}`)) === 6,
    5_000,
    'the attempts recorded',
  );

  const { failing } = json<{ failing: Record<string, unknown>[] }>(
    await admin('webhooks', 'failing'),
  );
  expect(failing).toEqual([
    {
      institution_id: service.tenant.institutionId,
      institution: expect.any(String),
      endpoint_id: down.id,
      url: `http://127.0.0.1:${port}/down`,
      status: 'enabled',
      consecutive_failures: 6,
      last_error: 'HTTP 503',
      last_failed_at: expect.stringMatching(/^\d{4}-/),
    },
  ]);
  expect(failing.map((row) => row.endpoint_id)).not.toContain(up.id);
  for (const id of [down.id, up.id])
    await service.call('DELETE', `/api/v1/webhook-endpoints/${id}`);
});

test('webhooks replay sends an event again to an endpoint of its institution, and refuses another institution’s', async () => {
  const mine = await endpoint('/replay');
  const theirs = await endpoint('/theirs', other.key);
  const donor = await newDonor();
  const eventId = await donorEvent(donor.id);
  await waitFor(() => (received['/replay'] ?? []).length === 1, 10_000, 'the first delivery');

  const { delivery } = json<{ delivery: Record<string, unknown> }>(
    await admin('webhooks', 'replay', '--event', eventId, '--endpoint', String(mine.id)),
  );
  expect(delivery).toMatchObject({
    institution_id: service.tenant.institutionId,
    endpoint_id: mine.id,
    event_id: eventId,
    event_type: 'donor.created',
    status: 'pending',
  });
  await waitFor(() => (received['/replay'] ?? []).length === 2, 10_000, 'the replay');
  expect(received['/replay']).toEqual([eventId, eventId]);

  // Another institution's endpoint, an unknown event or endpoint: refused, nothing sent.
  const before = await service.count('webhook_deliveries');
  oneLineFailure(
    await admin('webhooks', 'replay', '--event', eventId, '--endpoint', String(theirs.id)),
    /institution/,
  );
  oneLineFailure(
    await admin('webhooks', 'replay', '--event', 'evt_0000', '--endpoint', String(mine.id)),
    /No event/,
  );
  oneLineFailure(
    await admin('webhooks', 'replay', '--event', eventId, '--endpoint', '999999'),
    /No webhook endpoint/,
  );
  expect(await service.count('webhook_deliveries')).toBe(before);
  expect(received['/theirs'] ?? []).toEqual([]);
});

test('webhooks failing counts the whole streak since the last delivery, as the 5-day disabling does, however far back it began', async () => {
  const failing = await created<{ id: number }>(
    service.call('POST', '/api/v1/webhook-endpoints', {
      body: { url: `http://127.0.0.1:${port}/streak`, enabled_events: ['tag.*'] },
    }),
  );
  const institutionId = service.tenant.institutionId;
  const deliveryId = await service.db.oneFirst(sql.type(z.object({ id: z.number() }))`
    INSERT INTO webhook_deliveries (institution_id, endpoint_id, event_id, event_type, status,
                                    attempts, created_at)
    VALUES (${institutionId}, ${failing.id}, 'evt_streak', 'donor.created', 'failed', 4,
            now() - interval '10 days')
    RETURNING id`);
  // Delivered 9 days ago, then failed 8 days ago, 6 days ago and an hour ago.
  for (const [age, error] of [
    ['9 days', null],
    ['8 days', 'HTTP 500'],
    ['6 days', 'HTTP 500'],
    ['1 hour', 'HTTP 502'],
  ] as const)
    await service.db.query(sql.unsafe`
      INSERT INTO webhook_delivery_attempts (institution_id, delivery_id, status_code,
                                             duration_ms, error, started_at)
      VALUES (${institutionId}, ${deliveryId}, ${error ? 500 : 200}, 3, ${error},
              now() - ${age}::interval)`);

  const { failing: rows } = json<{ failing: Record<string, unknown>[] }>(
    await admin('webhooks', 'failing'),
  );
  expect(rows.find((row) => row.endpoint_id === failing.id)).toMatchObject({
    consecutive_failures: 3,
    last_error: 'HTTP 502',
  });
  await service.call('DELETE', `/api/v1/webhook-endpoints/${failing.id}`);
});
