// Webhooks (integration.md §2): endpoints, signed deliveries, retries and the SSRF rules.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'slonik';
import { Webhook } from 'standardwebhooks';
import { z } from 'zod';
import { pruneDeliveries } from '../common/webhooks/attempts.js';
import { disableFailingEndpoints } from '../common/webhooks/health.js';
import { startTestService, type TestService } from './helpers/harness.js';
import { waitFor } from './helpers/wait.js';

interface Endpoint {
  id: number;
  object: 'webhook_endpoint';
  url: string;
  enabled_events: string[];
  description: string | null;
  status: 'enabled' | 'disabled';
  secret?: string;
}

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

/** A receiver on loopback that answers each request with the next status of `answers`. */
class Receiver {
  readonly received: Received[] = [];
  private server: Server | null = null;
  port = 0;
  /** When set, the first request of each webhook-id is answered this (after `answers`). */
  firstTimeStatus: number | null = null;
  constructor(public answers: number[] = []) {}

  async start(port = 0): Promise<this> {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const id = request.headers['webhook-id'];
        const seen = this.received.some((delivery) => delivery.headers['webhook-id'] === id);
        this.received.push({
          headers: request.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        });
        const firstTime = seen ? null : this.firstTimeStatus;
        response.writeHead(this.answers.shift() ?? firstTime ?? 200).end();
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (server) await new Promise((resolve) => server.close(resolve));
  }

  get url() {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  /** Each delivery verified with the Standard Webhooks library; its event parsed. */
  verified(secret: string): { id: string; type: string; data: { object: { id: number } } }[] {
    const webhook = new Webhook(secret);
    return this.received.map(
      (delivery) =>
        webhook.verify(delivery.body, {
          'webhook-id': String(delivery.headers['webhook-id']),
          'webhook-timestamp': String(delivery.headers['webhook-timestamp']),
          'webhook-signature': String(delivery.headers['webhook-signature']),
        }) as { id: string; type: string; data: { object: { id: number } } },
    );
  }
}

let service: TestService;
const receivers: Receiver[] = [];
/** A port reserved for the receiver that is down at first: it is allowed before it listens. */
let latePort = 0;

async function freePort(): Promise<number> {
  const probe = await new Receiver().start();
  const port = probe.port;
  await probe.stop();
  return port;
}

beforeAll(async () => {
  for (let index = 0; index < 6; index++) receivers.push(await new Receiver().start());
  latePort = await freePort();
  service = await startTestService({
    WEBHOOK_ALLOWED_HOSTS: [
      ...receivers.map((r) => `127.0.0.1:${r.port}`),
      `127.0.0.1:${latePort}`,
    ].join(','),
    // Five retries within about 3 s: time enough to bring a receiver up between them.
    WEBHOOK_RETRY_SCHEDULE: '0.3,0.3,0.5,1,1',
  });
});

afterAll(async () => {
  await service?.close();
  await Promise.all(receivers.map((receiver) => receiver.stop()));
});

const createEndpoint = (body: Record<string, unknown>, key?: string) =>
  service.call<Endpoint>('POST', '/api/v1/webhook-endpoints', { body, ...(key ? { key } : {}) });

const endpointCount = () => service.count('webhook_endpoints');

/**
 * The events of one endpoint's history made by the service itself, not a request: the one
 * `webhook_endpoint.updated` of its disabling, as GET /events answers it.
 */
async function disableEventsOf(endpointId: number) {
  const history = await service.call<{
    data: {
      type: string;
      request_id: string | null;
      api_key_id: string | null;
      data: { object: Record<string, unknown>; previous_attributes?: Record<string, unknown> };
    }[];
  }>('GET', `/api/v1/events?object_type=webhook_endpoint&object_id=${endpointId}`);
  expect(history.status).toBe(200);
  return history.body.data.filter((event) => event.request_id === null);
}

/** The endpoint was disabled with exactly one event, carrying it as GET answers it. */
async function expectOneDisableEvent(endpointId: number) {
  const events = await disableEventsOf(endpointId);
  const endpoint = await service.call<Endpoint>('GET', `/api/v1/webhook-endpoints/${endpointId}`);
  expect(events).toEqual([
    {
      id: expect.stringMatching(/^evt_/),
      object: 'event',
      type: 'webhook_endpoint.updated',
      created_at: expect.any(String),
      request_id: null,
      api_key_id: null,
      data: { object: endpoint.body, previous_attributes: { status: 'enabled' } },
    },
  ]);
}

describe('webhook endpoints', () => {
  test('create answers the secret once; GET never shows it', async () => {
    const answer = await createEndpoint({
      url: receivers[0]!.url,
      enabled_events: ['gift.*'],
      description: 'Finance',
    });
    expect(answer.status).toBe(201);
    expect(answer.headers.get('location')).toBe(`/api/v1/webhook-endpoints/${answer.body.id}`);
    expect(answer.body).toMatchObject({
      object: 'webhook_endpoint',
      url: receivers[0]!.url,
      enabled_events: ['gift.*'],
      description: 'Finance',
      status: 'enabled',
    });
    expect(answer.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(Buffer.from(answer.body.secret!.slice(6), 'base64').length).toBeGreaterThanOrEqual(24);

    const one = await service.call<Endpoint>('GET', `/api/v1/webhook-endpoints/${answer.body.id}`);
    expect(one.status).toBe(200);
    expect(one.body).not.toHaveProperty('secret');
    const list = await service.call<{ data: Endpoint[] }>('GET', '/api/v1/webhook-endpoints');
    expect(list.status).toBe(200);
    expect(list.body.data.map((endpoint) => endpoint.id)).toContain(answer.body.id);
    expect(list.body.data.every((endpoint) => !('secret' in endpoint))).toBe(true);
    // Its event carries the endpoint without the secret.
    const event = await service.db.oneFirst(sql.type(z.object({ data: z.json() }))`
      SELECT data FROM events WHERE type = 'webhook_endpoint.created'
        AND object_id = ${answer.body.id}`);
    expect(JSON.stringify(event)).not.toContain(answer.body.secret!);

    const patched = await service.call<Endpoint>(
      'PATCH',
      `/api/v1/webhook-endpoints/${answer.body.id}`,
      { body: { status: 'disabled', description: null } },
    );
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ status: 'disabled', description: null });
    expect(patched.body).not.toHaveProperty('secret');

    const gone = await service.call('DELETE', `/api/v1/webhook-endpoints/${answer.body.id}`);
    expect(gone.status).toBe(200);
    expect(gone.body).toEqual({ id: answer.body.id, object: 'webhook_endpoint', deleted: true });
    expect((await service.call('GET', `/api/v1/webhook-endpoints/${answer.body.id}`)).status).toBe(
      404,
    );
  });

  test.each([
    ['https://127.0.0.1/', 'url'],
    ['https://169.254.169.254/latest/meta-data', 'url'],
    ['https://10.1.2.3/', 'url'],
    ['https://[::1]/', 'url'],
    ['https://[::ffff:127.0.0.1]/', 'url'],
    // IPv6 that carries or translates an IPv4 address, and the other special-purpose blocks.
    ['https://[::169.254.169.254]/', 'url'],
    ['https://[64:ff9b:1::a00:1]/', 'url'],
    ['https://[64:ff9b::a9fe:a9fe]/', 'url'],
    ['https://[::ffff:0:a9fe:a9fe]/', 'url'],
    ['https://[2002:a9fe:a9fe::1]/', 'url'],
    ['https://[2001::a9fe:a9fe]/', 'url'],
    ['https://[2001:db8::1]/', 'url'],
    ['http://hooks.example.org/', 'url'],
    ['ftp://hooks.example.org/', 'url'],
    ['not a url', 'url'],
  ])('refuses %s (422 invalid_value, nothing stored)', async (url, param) => {
    const before = await endpointCount();
    const answer = await createEndpoint({ url, enabled_events: ['*'] });
    expect(answer.status).toBe(422);
    expect(answer.body).toMatchObject({
      error: { code: 'validation_failed', errors: [{ param, code: 'invalid_value' }] },
    });
    expect(await endpointCount()).toBe(before);
  });

  test('an update to a url naming an IPv4-compatible metadata address is refused and changes nothing', async () => {
    const endpoint = await createEndpoint({ url: receivers[0]!.url, enabled_events: ['*'] });
    const path = `/api/v1/webhook-endpoints/${endpoint.body.id}`;
    const answer = await service.call('PATCH', path, {
      body: { url: 'https://[::169.254.169.254]/latest/meta-data' },
    });
    expect(answer.status).toBe(422);
    expect(answer.body).toMatchObject({
      error: { code: 'validation_failed', errors: [{ param: 'url', code: 'invalid_value' }] },
    });
    expect((await service.call<Endpoint>('GET', path)).body.url).toBe(receivers[0]!.url);
    await service.call('DELETE', path);
  });

  test('refuses unknown event types and a missing url', async () => {
    const before = await endpointCount();
    const answer = await createEndpoint({
      enabled_events: ['gift.created', 'gift.exploded', 'nothing.*'],
    });
    expect(answer.status).toBe(422);
    expect(answer.body).toMatchObject({
      error: {
        code: 'validation_failed',
        errors: expect.arrayContaining([
          expect.objectContaining({ param: 'enabled_events.1', code: 'invalid_value' }),
          expect.objectContaining({ param: 'enabled_events.2', code: 'invalid_value' }),
          expect.objectContaining({ param: 'url', code: 'required' }),
        ]),
      },
    });
    expect(await endpointCount()).toBe(before);
  });

  test('another institution’s endpoint is as missing as none', async () => {
    const other = await service.createTenant('Other College', 'USD');
    const mine = await createEndpoint({ url: receivers[0]!.url, enabled_events: ['*'] });
    for (const [method, path] of [
      ['GET', `/api/v1/webhook-endpoints/${mine.body.id}`],
      ['PATCH', `/api/v1/webhook-endpoints/${mine.body.id}`],
      ['DELETE', `/api/v1/webhook-endpoints/${mine.body.id}`],
      ['POST', `/api/v1/webhook-endpoints/${mine.body.id}/rotate-secret`],
    ] as const) {
      const theirs = await service.call(method, path, {
        key: other.key,
        ...(method === 'PATCH' || method === 'POST' ? { body: {} } : {}),
      });
      const missing = await service.call(method, path.replace(String(mine.body.id), '999999'), {
        key: other.key,
        ...(method === 'PATCH' || method === 'POST' ? { body: {} } : {}),
      });
      expect(theirs.status).toBe(404);
      const { request_id: _theirs, ...theirError } = (theirs.body as { error: object }).error as {
        request_id: string;
      };
      const { request_id: _missing, ...missingError } = (missing.body as { error: object })
        .error as { request_id: string };
      expect(theirError).toEqual(missingError);
    }
    await service.call('DELETE', `/api/v1/webhook-endpoints/${mine.body.id}`);
  });
});

const newDonor = (key?: string) =>
  service.call<{ id: number }>('POST', '/api/v1/donors', {
    ...(key ? { key } : {}),
    body: { role: 'Individual', first_name: 'Ada', last_name: 'Lovelace' },
    headers: { 'Idempotency-Key': `donor-${Math.random()}` },
  });

const deliveriesOf = (endpointId: number) =>
  service.db.any(sql.type(
    z.object({ event_type: z.string(), status: z.string(), attempts: z.number() }),
  )`SELECT event_type, status, attempts FROM webhook_deliveries
    WHERE endpoint_id = ${endpointId} ORDER BY id`);

/** Where an event's attempts start in a list of attempts (ordered by delivery). */
const attemptsOrder = (attempts: readonly { event_id: string }[], eventId: string) =>
  attempts.findIndex((attempt) => attempt.event_id === eventId);

/** Enough for the dispatcher (every 250 ms) and a delivery to happen, were one due. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 1_500));

describe('deliveries', () => {
  test('a committed write reaches a matching endpoint once, signed and as GET /events answers it', async () => {
    const receiver = receivers[1]!;
    const other = await service.createTenant('Elsewhere', 'USD');
    const endpoint = await createEndpoint({ url: receiver.url, enabled_events: ['donor.created'] });
    const tagsOnly = await createEndpoint({ url: receivers[2]!.url, enabled_events: ['tag.*'] });
    expect(endpoint.status).toBe(201);

    const donor = await newDonor();
    expect(donor.status).toBe(201);
    // Nothing for a dry run, a replay, a refused write, another institution's write, or an
    // event type the endpoint did not ask for.
    const key = `donor-replay-${Math.random()}`;
    const body = { role: 'Individual', first_name: 'Grace', last_name: 'Hopper' };
    const first = await service.call<{ id: number }>('POST', '/api/v1/donors', {
      body,
      headers: { 'Idempotency-Key': key },
    });
    const replay = await service.call<{ id: number }>('POST', '/api/v1/donors', {
      body,
      headers: { 'Idempotency-Key': key },
    });
    expect(replay.body.id).toBe(first.body.id);
    const dry = await service.call('POST', '/api/v1/donors?dry_run=true', {
      body,
      headers: { 'Idempotency-Key': `dry-${Math.random()}` },
    });
    expect(dry.status).toBe(201);
    const refused = await service.call('POST', '/api/v1/donors', {
      body: { role: 'Individual' },
      headers: { 'Idempotency-Key': `refused-${Math.random()}` },
    });
    expect(refused.status).toBe(422);
    expect((await newDonor(other.key)).status).toBe(201);
    const fund = await service.call('POST', '/api/v1/funds', {
      body: { name: 'Hooks', code: 'HOOK' },
    });
    expect(fund.status).toBe(201);

    await waitFor(() => receiver.received.length >= 2, 10_000, 'two deliveries');
    await settle();
    const events = receiver.verified(endpoint.body.secret!);
    // Delivery order is not promised (integration.md §2): deliveries run side by side.
    const byId = [...events].sort((a, b) => a.data.object.id - b.data.object.id);
    expect(byId.map((event) => [event.type, event.data.object.id])).toEqual([
      ['donor.created', donor.body.id],
      ['donor.created', first.body.id],
    ]);
    for (const [index, event] of events.entries()) {
      expect(receiver.received[index]!.headers['webhook-id']).toBe(event.id);
      expect(receiver.received[index]!.headers['content-type']).toBe('application/json');
      const stored = await service.call('GET', `/api/v1/events/${event.id}`);
      expect(receiver.received[index]!.body).toBe(JSON.stringify(stored.body));
    }
    expect(receivers[2]!.received).toEqual([]);
    // The receivers have the bodies before the worker records their answers.
    await waitFor(
      async () =>
        (await deliveriesOf(endpoint.body.id)).every((delivery) => delivery.status === 'delivered'),
      10_000,
      'the deliveries recorded',
    );
    expect(await deliveriesOf(endpoint.body.id)).toEqual([
      { event_type: 'donor.created', status: 'delivered', attempts: 1 },
      { event_type: 'donor.created', status: 'delivered', attempts: 1 },
    ]);
    expect(await deliveriesOf(tagsOnly.body.id)).toEqual([]);
    for (const id of [endpoint.body.id, tagsOnly.body.id])
      await service.call('DELETE', `/api/v1/webhook-endpoints/${id}`);
  });

  test('a receiver down, then up, gets the event after retries with the same webhook-id', async () => {
    const late = new Receiver();
    const endpoint = await createEndpoint({
      url: `http://127.0.0.1:${latePort}/hook`,
      enabled_events: ['donor.*'],
    });
    const donor = await newDonor();
    await waitFor(
      async () => ((await deliveriesOf(endpoint.body.id))[0]?.attempts ?? 0) >= 2,
      10_000,
      'two refused attempts',
    );
    await late.start(latePort);
    try {
      await waitFor(() => late.received.length === 1, 10_000, 'the delivery');
      const [event] = late.verified(endpoint.body.secret!);
      expect(event!.data.object.id).toBe(donor.body.id);
      // The receiver has the body before the worker records its answer.
      await waitFor(
        async () => (await deliveriesOf(endpoint.body.id))[0]?.status === 'delivered',
        10_000,
        'the delivery recorded',
      );
      const [delivery] = await deliveriesOf(endpoint.body.id);
      expect(delivery!.status).toBe('delivered');
      expect(delivery!.attempts).toBeGreaterThanOrEqual(3);
    } finally {
      await late.stop();
      await service.call('DELETE', `/api/v1/webhook-endpoints/${endpoint.body.id}`);
    }
  });

  test('500 then 200 is retried and delivered once; 410 disables the endpoint', async () => {
    const flaky = receivers[3]!;
    flaky.answers.push(500, 302, 200);
    const endpoint = await createEndpoint({ url: flaky.url, enabled_events: ['donor.*'] });
    const donor = await newDonor();
    await waitFor(() => flaky.received.length === 3, 10_000, 'three attempts');
    await settle();
    expect(flaky.received).toHaveLength(3);
    const ids = new Set(flaky.received.map((delivery) => delivery.headers['webhook-id']));
    expect(ids.size).toBe(1);
    expect(flaky.verified(endpoint.body.secret!)[0]!.data.object.id).toBe(donor.body.id);
    expect(await deliveriesOf(endpoint.body.id)).toEqual([
      { event_type: 'donor.created', status: 'delivered', attempts: 3 },
    ]);
    const listed = await service.call<{ data: Record<string, unknown>[] }>(
      'GET',
      `/api/v1/webhook-endpoints/${endpoint.body.id}/deliveries`,
    );
    expect(listed.status).toBe(200);
    expect(listed.body.data).toEqual([
      expect.objectContaining({
        object: 'webhook_delivery',
        event_id: flaky.received[0]!.headers['webhook-id'],
        event_type: 'donor.created',
        status: 'delivered',
        attempts: 3,
        status_code: 200,
        error: null,
        next_attempt_at: null,
      }),
    ]);
    const other = await service.createTenant('Third College', 'USD');
    const theirs = await service.call(
      'GET',
      `/api/v1/webhook-endpoints/${endpoint.body.id}/deliveries`,
      { key: other.key },
    );
    expect(theirs.status).toBe(404);

    // Every attempt, newest first, on the cursor engine.
    const attemptsPath = `/api/v1/webhook-endpoints/${endpoint.body.id}/deliveries/${listed.body.data[0]!.id as number}/attempts`;
    const firstPage = await service.call<{
      data: Record<string, unknown>[];
      has_more: boolean;
      next_cursor: string | null;
    }>('GET', `${attemptsPath}?limit=2`);
    expect(firstPage.status).toBe(200);
    expect(firstPage.body.has_more).toBe(true);
    const secondPage = await service.call<{ data: Record<string, unknown>[]; has_more: boolean }>(
      'GET',
      `${attemptsPath}?limit=2&starting_after=${firstPage.body.next_cursor}`,
    );
    expect(secondPage.body.has_more).toBe(false);
    const attempts = [...firstPage.body.data, ...secondPage.body.data];
    expect(attempts).toEqual(
      [
        [200, null],
        [302, 'HTTP 302'],
        [500, 'HTTP 500'],
      ].map(([statusCode, error]) => ({
        id: expect.any(Number),
        object: 'webhook_delivery_attempt',
        status_code: statusCode,
        duration_ms: expect.any(Number),
        error,
        started_at: expect.any(String),
      })),
    );
    const startedAt = attempts.map((attempt) => String(attempt.started_at));
    expect([...startedAt].sort().reverse()).toEqual(startedAt);
    for (const [key, path] of [
      [other.key, attemptsPath],
      [undefined, attemptsPath.replace(/deliveries\/\d+/, 'deliveries/999999')],
    ] as const) {
      const refused = await service.call<{ error: { code: string } }>('GET', path, { key });
      expect(refused.status).toBe(404);
      expect(refused.body.error.code).toBe('resource_not_found');
    }

    flaky.answers.push(410);
    await newDonor();
    await waitFor(
      async () =>
        (await service.call<Endpoint>('GET', `/api/v1/webhook-endpoints/${endpoint.body.id}`)).body
          .status === 'disabled',
      10_000,
      'the endpoint disabled',
    );
    await waitFor(
      async () => (await deliveriesOf(endpoint.body.id))[1]?.status === 'failed',
      10_000,
      'the refused delivery recorded',
    );
    const deliveries = await deliveriesOf(endpoint.body.id);
    expect(deliveries[1]).toEqual({ event_type: 'donor.created', status: 'failed', attempts: 1 });
    await expectOneDisableEvent(endpoint.body.id);
    const before = flaky.received.length;
    await newDonor();
    await settle();
    expect(flaky.received).toHaveLength(before);
    await service.call('DELETE', `/api/v1/webhook-endpoints/${endpoint.body.id}`);
  });

  test('deliveries under way together (their reads and outcomes share statements) each reach the receiver and have every attempt recorded', async () => {
    const receiver = receivers[5]!;
    receiver.firstTimeStatus = 503;
    const endpoint = await createEndpoint({ url: receiver.url, enabled_events: ['donor.created'] });
    const donors = await Promise.all(Array.from({ length: 40 }, () => newDonor()));
    expect(donors.map((donor) => donor.status)).toEqual(donors.map(() => 201));
    await waitFor(
      async () =>
        (await deliveriesOf(endpoint.body.id)).filter((d) => d.status === 'delivered').length ===
        40,
      20_000,
      'forty deliveries recorded',
    );
    await settle();
    // Each event twice, with its own webhook-id: refused once (503), then accepted.
    const delivered = receiver.verified(endpoint.body.secret!);
    const byEvent = Map.groupBy(delivered, (event) => event.id);
    expect(byEvent.size).toBe(40);
    expect([...byEvent.values()].map((sends) => sends.length)).toEqual(donors.map(() => 2));
    expect(new Set(delivered.map((event) => event.data.object.id))).toEqual(
      new Set(donors.map((donor) => donor.body.id)),
    );
    expect(await deliveriesOf(endpoint.body.id)).toEqual(
      donors.map(() => ({ event_type: 'donor.created', status: 'delivered', attempts: 2 })),
    );
    const attempts = await service.db.any(sql.type(
      z.object({ event_id: z.string(), status_code: z.number(), error: z.string().nullable() }),
    )`
      SELECT d.event_id, a.status_code, a.error FROM webhook_delivery_attempts a
      JOIN webhook_deliveries d ON d.institution_id = a.institution_id AND d.id = a.delivery_id
      WHERE d.institution_id = ${service.tenant.institutionId}
        AND d.endpoint_id = ${endpoint.body.id}
      ORDER BY d.id, a.id`);
    expect(attempts).toEqual(
      [...byEvent.keys()]
        .sort((a, b) => attemptsOrder(attempts, a) - attemptsOrder(attempts, b))
        .flatMap((eventId) => [
          { event_id: eventId, status_code: 503, error: 'HTTP 503' },
          { event_id: eventId, status_code: 200, error: null },
        ]),
    );
    await service.call('DELETE', `/api/v1/webhook-endpoints/${endpoint.body.id}`);
  });

  test('after a rotation both secrets sign; a receiver with either verifies', async () => {
    const receiver = receivers[4]!;
    const endpoint = await createEndpoint({ url: receiver.url, enabled_events: ['donor.created'] });
    const rotated = await service.call<Endpoint>(
      'POST',
      `/api/v1/webhook-endpoints/${endpoint.body.id}/rotate-secret`,
      { body: {} },
    );
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(endpoint.body.secret);
    await newDonor();
    await waitFor(() => receiver.received.length === 1, 10_000, 'the delivery');
    const signature = String(receiver.received[0]!.headers['webhook-signature']);
    expect(signature.split(' ')).toHaveLength(2);
    expect(signature.split(' ').every((part) => part.startsWith('v1,'))).toBe(true);
    expect(receiver.verified(rotated.body.secret!)).toHaveLength(1);
    expect(receiver.verified(endpoint.body.secret!)).toHaveLength(1);
    await service.call('DELETE', `/api/v1/webhook-endpoints/${endpoint.body.id}`);
  });
});

test('a name that resolves to loopback is refused at delivery, not connected to', async () => {
  const endpoint = await createEndpoint({
    url: 'https://localhost:1/hook',
    enabled_events: ['donor.created'],
  });
  expect(endpoint.status).toBe(201);
  await newDonor();
  const lastError = () =>
    service.db.maybeOneFirst(sql.type(z.object({ last_error: z.string().nullable() }))`
      SELECT last_error FROM webhook_deliveries WHERE endpoint_id = ${endpoint.body.id}`);
  await waitFor(async () => (await lastError()) != null, 10_000, 'an attempt');
  expect(await lastError()).toMatch(/loopback/);
  await service.call('DELETE', `/api/v1/webhook-endpoints/${endpoint.body.id}`);
});

test('a retry is a write: dry run, Idempotency-Key, one event, one send; another institution’s ids are 404', async () => {
  const receiver = receivers[0]!;
  receiver.received.length = 0;
  // Refused until its retries are spent.
  receiver.answers.push(400, 400, 400, 400, 400, 400);
  const endpoint = await createEndpoint({ url: receiver.url, enabled_events: ['donor.created'] });
  await newDonor();
  const path = `/api/v1/webhook-endpoints/${endpoint.body.id}/deliveries`;
  const list = () => service.call<{ data: { id: number; status: string }[] }>('GET', path);
  await waitFor(
    async () => (await list()).body.data[0]?.status === 'failed',
    10_000,
    'the delivery failed',
  );
  expect(receiver.received).toHaveLength(6);
  const [delivery] = (await list()).body.data;
  const retryPath = `${path}/${delivery!.id}/retry`;
  const retriedEvents = () =>
    service.db.oneFirst(sql.type(z.object({ count: z.number() }))`
      SELECT count(*)::int FROM events WHERE type = 'webhook_delivery.retried'
        AND object_id = ${delivery!.id}`);

  // Another institution: its own key on my ids, and my key on its endpoint's path.
  const other = await service.createTenant('Fourth College', 'USD');
  const theirs = await service.call<{ error: { code: string } }>('POST', retryPath, {
    key: other.key,
    body: {},
  });
  const missing = await service.call<{ error: { code: string } }>(
    'POST',
    `${path}/${delivery!.id + 1000}/retry`,
    { body: {} },
  );
  expect(theirs.status).toBe(404);
  expect(missing.status).toBe(404);
  expect(theirs.body.error.code).toBe(missing.body.error.code);
  const unknown = await service.call('POST', retryPath, { body: { now: true } });
  expect(unknown.status).toBe(422);

  // A dry run answers what the write would and changes nothing.
  const dry = await service.call<{ status: string }>('POST', `${retryPath}?dry_run=true`, {
    body: {},
  });
  expect(dry.status).toBe(200);
  expect(dry.body).toMatchObject({ id: delivery!.id, status: 'pending' });
  const dryHeader = await service.call('POST', retryPath, {
    body: {},
    headers: { 'Dry-Run': 'true' },
  });
  expect(dryHeader.status).toBe(200);
  expect((await list()).body.data[0]!.status).toBe('failed');
  expect(await retriedEvents()).toBe(0);

  const headers = { 'Idempotency-Key': `retry-${delivery!.id}` };
  const retried = await service.call<{ status: string }>('POST', retryPath, {
    body: {},
    headers,
  });
  expect(retried.status).toBe(200);
  expect(retried.body).toMatchObject({ id: delivery!.id, status: 'pending' });
  const replay = await service.call<{ status: string }>('POST', retryPath, { body: {}, headers });
  expect(replay.status).toBe(200);
  expect(replay.headers.get('idempotent-replayed')).toBe('true');
  expect(replay.body).toEqual(retried.body);
  await waitFor(() => receiver.received.length === 7, 10_000, 'the retry');
  await waitFor(
    async () => (await list()).body.data[0]?.status === 'delivered',
    5_000,
    'delivered',
  );
  expect(await retriedEvents()).toBe(1);
  const events = await service.call<{ data: { data: { object: unknown } }[] }>(
    'GET',
    '/api/v1/events?type=webhook_delivery.retried&limit=1',
  );
  expect(events.status).toBe(200);
  expect(events.body.data[0]!.data.object).toEqual(retried.body);
  // The replay asked for no second send: one request, queued once.
  const requests = await service.db.one(sql.type(
    z.object({ retries_requested: z.number(), retries_queued: z.number() }),
  )`
    SELECT retries_requested, retries_queued FROM webhook_deliveries WHERE id = ${delivery!.id}`);
  expect(requests).toEqual({ retries_requested: 1, retries_queued: 1 });
  expect(receiver.received).toHaveLength(7);
  const ids = new Set(receiver.received.map((received) => received.headers['webhook-id']));
  expect(ids.size).toBe(1);
  expect(receiver.verified(endpoint.body.secret!)).toHaveLength(7);
  await service.call('DELETE', `/api/v1/webhook-endpoints/${endpoint.body.id}`);
});

test('a retry asked for by hand that fails adds an attempt and keeps the schedule: a retry still due stays pending at its time, spent retries stay failed', async () => {
  // Every send is refused (the name resolves to loopback), so the retries asked for fail.
  const endpoint = await createEndpoint({
    url: 'https://localhost:1/by-hand',
    enabled_events: ['tag.*'],
  });
  const institutionId = service.tenant.institutionId;
  const [scheduledEvent, spentEvent] = [await newDonor(), await newDonor()];
  const eventOf = (donorId: number) =>
    service.db.oneFirst(sql.type(z.object({ id: z.string() }))`
      SELECT id FROM events WHERE type = 'donor.created' AND object_id = ${donorId}`);
  // Two deliveries as their automatic attempts left them: the next retry due in an hour, and
  // every retry spent.
  const insertDelivery = async (eventId: string, status: string, next: string | null) =>
    service.db.oneFirst(sql.type(z.object({ id: z.number() }))`
      INSERT INTO webhook_deliveries (institution_id, endpoint_id, event_id, event_type, status,
                                      attempts, last_error, next_attempt_at)
      VALUES (${institutionId}, ${endpoint.body.id}, ${eventId}, 'donor.created', ${status}, 3,
              'HTTP 500', ${next}::timestamptz)
      RETURNING id`);
  const inAnHour = new Date(Date.now() + 3_600_000).toISOString();
  const scheduled = await insertDelivery(
    await eventOf(scheduledEvent.body.id),
    'pending',
    inAnHour,
  );
  const spent = await insertDelivery(await eventOf(spentEvent.body.id), 'failed', null);
  const path = `/api/v1/webhook-endpoints/${endpoint.body.id}/deliveries`;
  interface Delivery {
    id: number;
    status: string;
    attempts: number;
    error: string | null;
    next_attempt_at: string | null;
  }
  const delivery = async (id: number) => {
    const list = await service.call<{ data: Delivery[] }>('GET', path);
    return list.body.data.find((row) => row.id === id)!;
  };
  const scheduledAt = (await delivery(scheduled)).next_attempt_at;
  expect(Date.parse(scheduledAt!)).toBe(Date.parse(inAnHour));

  for (const [id, next] of [
    [scheduled, scheduledAt],
    [spent, null],
  ] as const) {
    const retried = await service.call<Delivery>('POST', `${path}/${id}/retry`, {
      body: {},
      headers: { 'Idempotency-Key': `by-hand-${id}` },
    });
    expect(retried.status).toBe(200);
    expect(retried.body).toMatchObject({ id, status: 'pending', next_attempt_at: next });
  }
  await waitFor(
    async () =>
      (await delivery(scheduled)).attempts === 4 && (await delivery(spent)).attempts === 4,
    10_000,
    'the two sends asked for',
  );
  expect(await delivery(scheduled)).toMatchObject({
    status: 'pending',
    attempts: 4,
    error: expect.stringMatching(/loopback/),
    next_attempt_at: scheduledAt,
  });
  expect(await delivery(spent)).toMatchObject({
    status: 'failed',
    attempts: 4,
    error: expect.stringMatching(/loopback/),
    next_attempt_at: null,
  });
  for (const id of [scheduled, spent]) {
    const attempts = await service.call<{ data: { error: string | null }[] }>(
      'GET',
      `${path}/${id}/attempts`,
    );
    expect(attempts.body.data).toEqual([
      expect.objectContaining({ status_code: null, error: expect.stringMatching(/loopback/) }),
    ]);
  }
  await service.call('DELETE', `/api/v1/webhook-endpoints/${endpoint.body.id}`);
});

/**
 * An endpoint with a delivery whose attempts started these long ago, each failing (`x`) or
 * delivering (`ok`): `['6 days', 'x']` is a failure 6 days back.
 */
async function endpointWithAttempts(name: string, attempts: readonly [string, 'x' | 'ok'][]) {
  // Subscribed to an event this test makes none of: a real attempt now (the worker delivering
  // the next endpoint's `webhook_endpoint.created`) would extend a streak the test wrote.
  const endpoint = await createEndpoint({
    url: `https://localhost:1/${name}`,
    enabled_events: ['gift.voided'],
  });
  const institutionId = service.tenant.institutionId;
  const deliveryId = await service.db.oneFirst(sql.type(z.object({ id: z.number() }))`
    INSERT INTO webhook_deliveries (institution_id, endpoint_id, event_id, event_type, status,
                                    attempts, created_at, updated_at)
    VALUES (${institutionId}, ${endpoint.body.id}, ${`evt_streak_${name}`}, 'donor.created',
            'failed', ${attempts.length}, now() - interval '30 days', now())
    RETURNING id`);
  for (const [age, outcome] of attempts)
    await service.db.query(sql.unsafe`
      INSERT INTO webhook_delivery_attempts (institution_id, delivery_id, status_code,
                                             duration_ms, error, started_at)
      VALUES (${institutionId}, ${deliveryId}, ${outcome === 'ok' ? 200 : 500}, 3,
              ${outcome === 'ok' ? null : 'HTTP 500'}, now() - ${age}::interval)`);
  return endpoint.body.id;
}

test('an endpoint is disabled when every attempt failed for 5 days: consecutive failures spanning 5 days, not one old failure', async () => {
  const failing = await endpointWithAttempts('failing', [
    ['6 days', 'x'],
    ['3 days', 'x'],
    ['1 hour', 'x'],
  ]);
  // Delivered 7 days ago, then failing without a break for 5 days and 1 hour.
  const failingSinceDelivered = await endpointWithAttempts('since', [
    ['7 days', 'ok'],
    ['5 days 2 hours', 'x'],
    ['1 hour', 'x'],
  ]);
  // Quiet for 6 days after one failure: no 5 days of failures.
  const quiet = await endpointWithAttempts('quiet', [['6 days', 'x']]);
  // Failures 6 days ago and lately, a delivery between them: the streak is 2 days long.
  const recovered = await endpointWithAttempts('recovered', [
    ['6 days', 'x'],
    ['3 days', 'ok'],
    ['2 days', 'x'],
    ['1 hour', 'x'],
  ]);
  // Failing for 4 days only.
  const young = await endpointWithAttempts('young', [
    ['4 days', 'x'],
    ['1 hour', 'x'],
  ]);
  expect(await disableFailingEndpoints(service.db)).toBe(2);
  const status = async (id: number) =>
    (await service.call<Endpoint>('GET', `/api/v1/webhook-endpoints/${id}`)).body.status;
  expect(await status(failing)).toBe('disabled');
  expect(await status(failingSinceDelivered)).toBe('disabled');
  for (const id of [quiet, recovered, young]) {
    expect(await status(id)).toBe('enabled');
    expect(await disableEventsOf(id)).toEqual([]);
  }
  await expectOneDisableEvent(failing);
  // Run again, it finds nothing more to disable and records nothing more.
  expect(await disableFailingEndpoints(service.db)).toBe(0);
  await expectOneDisableEvent(failing);
  for (const id of [failing, failingSinceDelivered, quiet, recovered, young])
    await service.call('DELETE', `/api/v1/webhook-endpoints/${id}`);
});

test('deliveries and attempts older than the events’ retention are pruned; newer ones and pending ones stay', async () => {
  const endpoint = await createEndpoint({ url: 'https://localhost:1/old', enabled_events: ['*'] });
  const institutionId = service.tenant.institutionId;
  const insertDelivery = (eventId: string, status: string, age: string) =>
    service.db.oneFirst(sql.type(z.object({ id: z.number() }))`
      INSERT INTO webhook_deliveries (institution_id, endpoint_id, event_id, event_type, status,
                                      attempts, created_at, updated_at)
      VALUES (${institutionId}, ${endpoint.body.id}, ${eventId}, 'donor.created', ${status}, 1,
              now() - ${age}::interval, now() - ${age}::interval)
      RETURNING id`);
  const old = await insertDelivery('evt_prune_old', 'failed', '100 days');
  const stillPending = await insertDelivery('evt_prune_pending', 'pending', '100 days');
  const recent = await insertDelivery('evt_prune_recent', 'delivered', '1 day');
  for (const [deliveryId, age] of [
    [old, '100 days'],
    [recent, '100 days'],
    [recent, '1 day'],
  ] as const)
    await service.db.query(sql.unsafe`
      INSERT INTO webhook_delivery_attempts (institution_id, delivery_id, status_code,
                                             duration_ms, error, started_at)
      VALUES (${institutionId}, ${deliveryId}, 500, 3, 'HTTP 500', now() - ${age}::interval)`);

  await pruneDeliveries(service.db, 90);
  const left = await service.db.anyFirst(sql.type(z.object({ id: z.number() }))`
    SELECT id FROM webhook_deliveries
    WHERE endpoint_id = ${endpoint.body.id} AND event_id LIKE 'evt_prune_%' ORDER BY id`);
  expect(left).toEqual([stillPending, recent]);
  const attemptsLeft = await service.db.anyFirst(sql.type(z.object({ id: z.number() }))`
    SELECT delivery_id AS id FROM webhook_delivery_attempts
    WHERE delivery_id IN (${old}, ${recent}) AND now() - started_at > interval '2 days'`);
  expect(attemptsLeft).toEqual([]);
  expect(
    await service.db.oneFirst(sql.type(z.object({ count: z.number() }))`
      SELECT count(*)::int FROM webhook_delivery_attempts WHERE delivery_id = ${recent}`),
  ).toBe(1);
  await service.call('DELETE', `/api/v1/webhook-endpoints/${endpoint.body.id}`);
});
