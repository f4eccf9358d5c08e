// Webhook delivery under faults (integration.md §2): receivers that never answer or redirect, a
// worker killed between a write's commit and its delivery, Redis restarted while events commit.
// Every receiver is a real HTTP server on loopback that verifies each delivery with the Standard
// Webhooks library; the checks are what it saw and what the deliveries list and table say.
import type { Queue } from 'bullmq';
import { sql } from 'slonik';
import { z } from 'zod';
import { redisTargetOf } from '../../common/redis.js';
import { deliveryQueueLocation } from '../../common/webhooks/queue.js';
import { startTestService, type TestService } from '../helpers/harness.js';
import { RedisServer } from '../helpers/processes.js';
import { sleep, waitFor } from '../helpers/wait.js';
import { openQueue } from '../helpers/writeQueue.js';
import { startRig, type Rig } from './faultKit.js';
import { WebhookReceiver } from './webhookReceiver.js';

interface Endpoint {
  id: number;
  secret: string;
}

interface Delivery {
  event_id: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  status_code: number | null;
  duration_ms: number | null;
  error: string | null;
  next_attempt_at: string | null;
}

/** Short, so that a killed worker's deliveries move to the next worker within seconds. */
const LOCK_DURATION_MS = 2_000;
const PARKED_MS = 5_000;

async function createEndpoint(service: TestService, url: string, events: string[]) {
  const answer = await service.call<Endpoint>('POST', '/api/v1/webhook-endpoints', {
    body: { url, enabled_events: events },
  });
  expect(answer.status).toBe(201);
  return answer.body;
}

/** The endpoint's deliveries as GET /webhook-endpoints/{id}/deliveries lists them, every page. */
async function listDeliveries(service: TestService, endpointId: number): Promise<Delivery[]> {
  const all: Delivery[] = [];
  let after: string | null = null;
  for (;;) {
    const page: { status: number; body: { data: Delivery[]; next_cursor: string | null } } =
      await service.call(
        'GET',
        `/api/v1/webhook-endpoints/${endpointId}/deliveries?limit=100`.concat(
          after ? `&starting_after=${after}` : '',
        ),
      );
    expect(page.status).toBe(200);
    all.push(...page.body.data);
    if (!page.body.next_cursor) return all;
    after = page.body.next_cursor;
  }
}

/** The institution's events of one type, by id. */
const eventIds = async (service: TestService, type: string) =>
  new Set(
    await service.db.anyFirst(sql.type(z.object({ id: z.string() }))`
      SELECT id FROM events
      WHERE institution_id = ${service.tenant.institutionId} AND type = ${type}`),
  );

const deliveryStatuses = (service: TestService, endpointId: number) =>
  service.db.any(sql.type(z.object({ event_id: z.string(), status: z.string() }))`
    SELECT event_id, status FROM webhook_deliveries WHERE endpoint_id = ${endpointId}`);

describe('receivers that never answer or redirect (one worker in process)', () => {
  const receivers = { slow: new WebhookReceiver(), redirecting: new WebhookReceiver() };
  const elsewhere = new WebhookReceiver();
  let service: TestService;

  beforeAll(async () => {
    for (const receiver of [...Object.values(receivers), elsewhere]) await receiver.start();
    service = await startTestService({
      WEBHOOK_ALLOWED_HOSTS: [...Object.values(receivers), elsewhere]
        .map((receiver) => receiver.host)
        .join(','),
      WEBHOOK_RETRY_SCHEDULE: '0.5,0.5,0.5,0.5,0.5,0.5,0.5,0.5',
      WEBHOOK_TIMEOUT_MS: '500',
    });
  });
  afterAll(async () => {
    await service?.close();
    for (const receiver of [...Object.values(receivers), elsewhere]) await receiver.stop();
  });

  const newDonor = async () => {
    const donor = await service.call<{ id: number }>('POST', '/api/v1/donors', {
      body: { role: 'Individual', first_name: 'Ada', last_name: 'Lovelace' },
      headers: { 'Idempotency-Key': `donor-${Math.random()}` },
    });
    expect(donor.status).toBe(201);
    return donor.body;
  };

  test('an attempt with no answer within WEBHOOK_TIMEOUT_MS is a timeout, retried; a later answer delivers it', async () => {
    const receiver = receivers.slow;
    receiver.answer = 'hang';
    const endpoint = await createEndpoint(service, receiver.url, ['donor.created']);
    const donor = await newDonor();

    // Two attempts the receiver held without answering: both recorded as timeouts.
    await waitFor(
      async () => ((await listDeliveries(service, endpoint.id))[0]?.attempts ?? 0) >= 2,
      10_000,
      'two timed-out attempts',
    );
    const [timedOut] = await listDeliveries(service, endpoint.id);
    expect(timedOut).toMatchObject({
      status: 'pending',
      status_code: null,
      error: 'no answer within 0.5 s',
    });
    // The whole timeout, give or take the millisecond a timer may fire early by the wall clock
    // (Node's timers run off the event loop's cached time).
    expect(timedOut!.duration_ms).toBeGreaterThanOrEqual(495);
    expect(timedOut!.next_attempt_at).not.toBeNull();

    receiver.answer = 204;
    await waitFor(
      async () => (await listDeliveries(service, endpoint.id))[0]?.status === 'delivered',
      10_000,
      'the delivery',
    );
    const [delivered] = await listDeliveries(service, endpoint.id);
    expect(delivered).toMatchObject({
      event_id: timedOut!.event_id,
      status: 'delivered',
      status_code: 204,
      error: null,
      next_attempt_at: null,
    });
    // Every attempt reached the receiver with the same webhook-id and a valid signature; it
    // accepted exactly one, the last.
    const events = receiver.verified(endpoint.secret);
    expect(events).toHaveLength(delivered!.attempts);
    expect(events.length).toBeGreaterThanOrEqual(3);
    expect(new Set(events.map((event) => event.id))).toEqual(new Set([timedOut!.event_id]));
    expect(events.map((event) => event.answered)).toEqual([
      ...events.slice(1).map(() => null),
      204,
    ]);
    expect(events[0]!.data.object.id).toBe(donor.id);
    await service.call('DELETE', `/api/v1/webhook-endpoints/${endpoint.id}`);
  });

  test('a 302 is a failed attempt, not followed: the receiver it points at sees nothing', async () => {
    const receiver = receivers.redirecting;
    receiver.answer = { redirect: elsewhere.url };
    const endpoint = await createEndpoint(service, receiver.url, ['donor.created']);
    const donor = await newDonor();

    await waitFor(
      async () => ((await listDeliveries(service, endpoint.id))[0]?.attempts ?? 0) >= 2,
      10_000,
      'two redirected attempts',
    );
    const [redirected] = await listDeliveries(service, endpoint.id);
    expect(redirected).toMatchObject({ status: 'pending', status_code: 302, error: 'HTTP 302' });
    expect(redirected!.next_attempt_at).not.toBeNull();

    receiver.answer = 200;
    await waitFor(
      async () => (await listDeliveries(service, endpoint.id))[0]?.status === 'delivered',
      10_000,
      'the delivery',
    );
    const [delivered] = await listDeliveries(service, endpoint.id);
    expect(delivered).toMatchObject({ status: 'delivered', status_code: 200, error: null });
    expect(elsewhere.received).toEqual([]);
    const events = receiver.verified(endpoint.secret);
    expect(events).toHaveLength(delivered!.attempts);
    expect(new Set(events.map((event) => event.id))).toEqual(new Set([delivered!.event_id]));
    expect(events.map((event) => event.answered)).toEqual([...events.slice(1).map(() => 302), 200]);
    expect(events[0]!.data.object.id).toBe(donor.id);
    await service.call('DELETE', `/api/v1/webhook-endpoints/${endpoint.id}`);
  });
});

/**
 * Environment for a rig whose deliveries go to these receivers, retried within seconds; a delivery
 * parked for its institution's turn looks again after 5 s (30 s in production).
 */
const webhookEnv = (...receivers: WebhookReceiver[]) => ({
  WEBHOOK_ALLOWED_HOSTS: receivers.map((receiver) => receiver.host).join(','),
  WEBHOOK_RETRY_SCHEDULE: '0.5,0.5,1,1,2,2,2,2',
  WEBHOOK_PARKED_MS: String(PARKED_MS),
  WORKER_LOCK_DURATION_MS: String(LOCK_DURATION_MS),
});

/** Gift creates through the API process, `parallel` at a time, each with its own key. */
async function createGifts(rig: Rig, label: string, count: number, parallel = 8) {
  const keys = Array.from({ length: count }, (_, index) => `${label}-${index}`);
  for (let start = 0; start < keys.length; start += parallel) {
    await Promise.all(
      keys.slice(start, start + parallel).map(async (key) => {
        const response = await rig.postGift(key, 10);
        expect(response.status).toBe(201);
      }),
    );
  }
}

describe('the delivering worker killed with SIGKILL between the commit and the delivery', () => {
  const GIFTS = 50;
  const receiver = new WebhookReceiver();
  let rig: Rig;
  let queue: Queue;
  let endpoint: Endpoint;
  /** Events whose delivery had reached the receiver (and hung there) when the worker died. */
  let inFlight = new Set<string>();
  let queued = 0;

  beforeAll(async () => {
    await receiver.start();
    // Attempts wait far longer than the test: the ones under way hang until the kill.
    rig = await startRig({ env: { ...webhookEnv(receiver), WEBHOOK_TIMEOUT_MS: '60000' } });
    const { config } = rig.service;
    queue = openQueue(deliveryQueueLocation(config.QUEUE_PREFIX), redisTargetOf(config));
    receiver.answer = 'hang';
    endpoint = await createEndpoint(rig.service, receiver.url, ['gift.created']);

    // The writes commit; the worker starts delivering as many as the institution may send at
    // once (all of them held by the receiver), the rest wait in the queue (parked, delayed).
    await createGifts(rig, 'killed', GIFTS);
    await waitFor(
      async () => (await rig.service.count('webhook_deliveries')) === GIFTS,
      10_000,
      'every event dispatched',
    );
    await waitFor(
      async () => {
        const counts = await queue.getJobCounts('waiting', 'active', 'prioritized', 'delayed');
        return counts.waiting! + counts.active! + counts.prioritized! + counts.delayed! === GIFTS;
      },
      10_000,
      'every delivery queued',
    );
    await waitFor(() => receiver.hanging >= 10, 10_000, 'deliveries under way');
    await sleep(200);

    await rig.kill(rig.workers[0]!);
    // Whatever the receiver has by now came from the dead worker (a request still in flight
    // when it died arrives within moments); the next worker starts after this.
    await sleep(300);
    inFlight = new Set(receiver.received.map((entry) => String(entry.headers['webhook-id'])));
    queued = GIFTS - inFlight.size;
    receiver.answer = 204;
    await rig.startWorker();
    // The deliveries that found the institution's slots taken were parked (delayed) for
    // WEBHOOK_PARKED_MS; the dead worker cannot wake them early, so the last of them run once
    // their park is over, then deliver at once.
    await waitFor(
      async () =>
        (await deliveryStatuses(rig.service, endpoint.id)).every(
          (delivery) => delivery.status === 'delivered',
        ),
      60_000,
      'every delivery delivered',
    );
  });
  afterAll(async () => {
    await queue?.close();
    await rig?.close();
    await receiver.stop();
  });

  test('the kill landed with deliveries under way and others still queued', () => {
    expect(inFlight.size).toBeGreaterThanOrEqual(10);
    expect(queued).toBeGreaterThanOrEqual(10);
  });

  test('every committed event was accepted by the receiver exactly once, verified', async () => {
    const events = await eventIds(rig.service, 'gift.created');
    expect(events.size).toBe(GIFTS);
    const tally = receiver.tally(endpoint.secret);
    expect(new Set(tally.keys())).toEqual(events);
    for (const [id, count] of tally)
      expect({ id, accepted: count.accepted }).toEqual({ id, accepted: 1 });
  });

  test('those not yet started were received once; those under way again, with the same webhook-id', () => {
    const tally = receiver.tally(endpoint.secret);
    for (const [id, count] of tally) {
      const expected = inFlight.has(id) ? 2 : 1;
      expect({ id, received: count.received }).toEqual({ id, received: expected });
    }
  });

  test('the deliveries list shows every event delivered, with the answer of its last attempt', async () => {
    const deliveries = await listDeliveries(rig.service, endpoint.id);
    expect(deliveries).toHaveLength(GIFTS);
    expect(new Set(deliveries.map((delivery) => delivery.event_id))).toEqual(
      await eventIds(rig.service, 'gift.created'),
    );
    for (const delivery of deliveries)
      expect(delivery).toMatchObject({
        status: 'delivered',
        status_code: 204,
        error: null,
        next_attempt_at: null,
      });
  });
});

describe('Redis killed while events commit and deliveries are under way, then started again', () => {
  const receiver = new WebhookReceiver();
  let redis: RedisServer;
  let rig: Rig;
  let endpoint: Endpoint;
  /** Events committed, and of those not yet accepted by the receiver, when Redis died. */
  let committedAtKill = 0;
  let undeliveredAtKill = 0;
  let committedWhileDown = 0;
  let releasedWhileDown = 0;

  beforeAll(async () => {
    redis = await RedisServer.start();
    await receiver.start();
    rig = await startRig({
      // Attempts wait longer than the outage: the held ones are answered while Redis is down.
      env: { ...webhookEnv(receiver), REDIS_URL: redis.url, WEBHOOK_TIMEOUT_MS: '60000' },
      superviseApi: true,
    });
    endpoint = await createEndpoint(rig.service, receiver.url, ['gift.created']);
    const stream = rig.stream('redis-webhooks', 4);
    stream.start();
    await stream.progress(30);
    await waitFor(() => receiver.received.length >= 10, 10_000, 'deliveries before the fault');

    // A backlog: the receiver holds what arrives, writes go on, deliveries queue up.
    receiver.answer = 'hang';
    await sleep(500);
    await redis.kill();
    const events = await eventIds(rig.service, 'gift.created');
    committedAtKill = events.size;
    const accepted = receiver.tally(endpoint.secret);
    undeliveredAtKill = [...events].filter((id) => !accepted.get(id)?.accepted).length;
    // The held deliveries are accepted while Redis is down: the worker records them in
    // Postgres but cannot tell the queue they are done.
    await sleep(500);
    releasedWhileDown = receiver.hanging;
    receiver.answer = 204;
    receiver.release(204);
    await sleep(1_500);
    committedWhileDown = (await eventIds(rig.service, 'gift.created')).size - committedAtKill;
    await redis.restart();
    await stream.progress(30, 30_000);
    await stream.stop();

    const all = await eventIds(rig.service, 'gift.created');
    await waitFor(
      () => [...all].every((id) => receiver.tally(endpoint.secret).has(id)),
      60_000,
      'every event received',
    );
    await waitFor(
      async () =>
        (await deliveryStatuses(rig.service, endpoint.id)).every(
          (delivery) => delivery.status === 'delivered',
        ),
      10_000,
      'every delivery recorded',
    );
    console.log(
      `Redis restart: ${all.size} events; at the kill ${committedAtKill} committed, ` +
        `${undeliveredAtKill} of them not yet accepted; ${releasedWhileDown} accepted while ` +
        `Redis was down; ${committedWhileDown} committed while it was down`,
    );
  });
  afterAll(async () => {
    await rig?.close();
    await receiver.stop();
    await redis?.stop();
  });

  test('the fault landed with committed events not yet delivered', () => {
    expect(undeliveredAtKill).toBeGreaterThan(0);
    expect(releasedWhileDown).toBeGreaterThan(0);
  });

  test('every gift.created event reached the receiver and was accepted exactly once', async () => {
    const events = await eventIds(rig.service, 'gift.created');
    expect(events.size).toBeGreaterThan(committedAtKill);
    const tally = receiver.tally(endpoint.secret);
    expect(new Set(tally.keys())).toEqual(events);
    for (const [id, count] of tally)
      expect({ id, received: count.received, accepted: count.accepted }).toEqual({
        id,
        received: 1,
        accepted: 1,
      });
  });

  test('each event has one delivery row, delivered', async () => {
    const deliveries = await deliveryStatuses(rig.service, endpoint.id);
    expect(deliveries.map((delivery) => delivery.event_id).sort()).toEqual(
      [...(await eventIds(rig.service, 'gift.created'))].sort(),
    );
    expect(deliveries.every((delivery) => delivery.status === 'delivered')).toBe(true);
  });
});
