import { Queue } from 'bullmq';
import { sql } from 'slonik';
import {
  acquireLeases,
  DONE_MARKER_SECONDS,
  EXTEND_AFTER_MS,
  LEASE_UNTIL_QUEUED_MS,
  lockKeyFor,
  newLockToken,
} from '../common/idempotency/lock.js';
import { insertApiKey } from '../common/institutions.js';
import { startTestService, type TestService } from './helpers/harness.js';
import { sleep, waitFor } from './helpers/wait.js';
import { openWriteQueue } from './helpers/writeQueue.js';

type Body = Record<string, unknown> & {
  id: number;
  error?: { code: string; type: string; errors?: unknown[] };
};

let service: TestService;
let donorId: number;
let queue: Queue;

const gift = (overrides: Record<string, unknown> = {}) => ({
  donor_id: donorId,
  amount: 250,
  subject: 'Annual fund',
  gift_date: '2026-03-01',
  ...overrides,
});
const postGift = (
  key: string | null,
  body: unknown,
  options: { dryRun?: boolean; apiKey?: string } = {},
) =>
  service.call<Body>('POST', `/api/v1/gifts${options.dryRun ? '?dry_run=true' : ''}`, {
    body,
    ...(options.apiKey ? { key: options.apiKey } : {}),
    headers: key === null ? {} : { 'Idempotency-Key': key },
  });
const giftCount = () => service.count('gifts', service.tenant.institutionId);
const jobCount = async () =>
  Object.values(await queue.getJobCounts()).reduce((sum, n) => sum + n, 0);

beforeAll(async () => {
  service = await startTestService();
  queue = openWriteQueue(service.config, service.tenant.institutionId);
  const donor = await service.call<Body>('POST', '/api/v1/donors', {
    body: {
      role: 'Individual',
      first_name: 'Grace',
      last_name: 'Hopper',
      email: 'grace@example.org',
    },
  });
  donorId = donor.body.id;
});
afterAll(async () => {
  await queue?.close();
  await service?.close();
});

describe('replay', () => {
  test('the same key and body returns the original response and creates nothing new', async () => {
    const first = await postGift('replay-1', gift());
    const second = await postGift('replay-1', gift());
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(second.status).toBe(201);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.headers.get('location')).toBe(first.headers.get('location'));
    expect(second.body).toEqual(first.body);
    expect(JSON.stringify(second.body)).toBe(JSON.stringify(first.body));
    expect(
      await service.db.oneFirst(
        sql.unsafe`SELECT count(*)::int FROM gifts WHERE id = ${first.body.id}`,
      ),
    ).toBe(1);
  });

  test('key order and whitespace do not change the fingerprint', async () => {
    const before = await giftCount();
    const first = await postGift('canonical-1', gift());
    const reordered = await service.call<Body>('POST', '/api/v1/gifts', {
      rawBody: `{ "gift_date": "2026-03-01",\n  "subject": "Annual fund", "amount": 250, "donor_id": ${donorId} }`,
      headers: { 'Content-Type': 'application/json', 'Idempotency-Key': 'canonical-1' },
    });
    expect(reordered.status).toBe(201);
    expect(reordered.headers.get('idempotent-replayed')).toBe('true');
    expect(reordered.body.id).toBe(first.body.id);
    expect(await giftCount()).toBe(before + 1);
  });

  test('keys are case-sensitive: a key differing only in case is another key', async () => {
    const lower = await postGift('case-key', gift());
    const upper = await postGift('CASE-KEY', gift());
    expect(upper.status).toBe(201);
    expect(upper.headers.get('idempotent-replayed')).toBeNull();
    expect(upper.body.id).not.toBe(lower.body.id);
  });

  test('updates and deletes replay too', async () => {
    const created = await postGift(null, gift());
    const path = `/api/v1/gifts/${created.body.id}`;
    const patch = (subject: string) =>
      service.call<Body>('PATCH', path, {
        body: { subject },
        headers: { 'Idempotency-Key': 'patch-1' },
      });
    const first = await patch('Renamed');
    const again = await patch('Renamed');
    expect(first.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    const remove = () =>
      service.call<Body>('DELETE', path, { headers: { 'Idempotency-Key': 'delete-1' } });
    const removed = await remove();
    const replayed = await remove();
    expect(removed.body).toEqual({ id: created.body.id, object: 'gift', deleted: true });
    expect(replayed.status).toBe(200);
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(replayed.body).toEqual(removed.body);
  });

  test.each([
    ['from the receipt the API reads', false],
    ['through a worker, its done marker lost', true],
  ])(
    'a donor create replays without re-validation after its email was taken elsewhere: %s',
    async (_how, dropMarker) => {
      const key = `taken-elsewhere-${String(dropMarker)}`;
      const email = `${key}@example.org`;
      const body = { role: 'Individual', first_name: 'Ida', last_name: 'Rhodes', email };
      const post = () =>
        service.call<Body>('POST', '/api/v1/donors', {
          body,
          headers: { 'Idempotency-Key': key },
        });
      const first = await post();
      expect(first.status).toBe(201);
      const moved = await service.call<Body>('PATCH', `/api/v1/donors/${first.body.id}`, {
        body: { email: `moved-${email}` },
      });
      expect(moved.status).toBe(200);
      const other = await service.call<Body>('POST', '/api/v1/donors', {
        body: { ...body, first_name: 'Other' },
      });
      expect(other.status).toBe(201);
      if (dropMarker)
        await service.redis.del(lockKeyFor(service.config, service.tenant.institutionId, key));
      const before = await service.count('donors');

      const replay = await post();
      expect(replay.status).toBe(201);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(replay.body).toEqual(first.body);
      expect(replay.headers.get('location')).toBe(first.headers.get('location'));
      expect(await service.count('donors')).toBe(before);
    },
  );
});

describe('mismatch', () => {
  test.each([
    ['a changed value', gift({ amount: 251 })],
    ['a changed type', gift({ amount: '250' })],
    ['null instead of absent', gift({ fund_id: null })],
    ['an extra field', gift({ type: 'cash' })],
  ])(
    'the same key with %s is 422 idempotency_key_request_mismatch and writes nothing',
    async (_label, changed) => {
      await postGift('mismatch-1', gift());
      const before = await giftCount();
      const response = await postGift('mismatch-1', changed);
      expect(response.status).toBe(422);
      expect(response.body.error).toMatchObject({
        type: 'idempotency_error',
        code: 'idempotency_key_request_mismatch',
      });
      expect(await giftCount()).toBe(before);
    },
  );

  test('the same key on another endpoint is a mismatch', async () => {
    await postGift('cross-endpoint', gift());
    const response = await service.call<Body>('POST', '/api/v1/funds', {
      body: { name: 'General', code: 'GEN' },
      headers: { 'Idempotency-Key': 'cross-endpoint' },
    });
    expect(response.status).toBe(422);
    expect(response.body.error?.code).toBe('idempotency_key_request_mismatch');
    expect(await service.count('funds')).toBe(0);
  });
});

describe('only successes are kept', () => {
  test('after a 422 the key stays free, so the corrected payload succeeds with the same key', async () => {
    const failed = await postGift('fix-me', gift({ amount: -5 }));
    expect(failed.status).toBe(422);
    const fixed = await postGift('fix-me', gift({ amount: 5 }));
    expect(fixed.status).toBe(201);
    expect(fixed.headers.get('idempotent-replayed')).toBeNull();
    expect(fixed.body.amount).toBe(5);
  });

  test('after a 404 the key stays free', async () => {
    const missing = await service.call<Body>('PATCH', '/api/v1/gifts/999999', {
      body: { subject: 'x' },
      headers: { 'Idempotency-Key': 'free-after-404' },
    });
    expect(missing.status).toBe(404);
    const created = await postGift('free-after-404', gift());
    expect(created.status).toBe(201);
  });
});

describe('dry runs and keys', () => {
  test('a dry run does not consume the key, writes nothing and queues nothing', async () => {
    const rows = await giftCount();
    const jobs = await jobCount();
    const dry = await postGift('dry-then-real', gift(), { dryRun: true });
    expect(dry.status).toBe(201);
    expect(dry.body.id).toBe(0);
    expect(await giftCount()).toBe(rows);
    expect(await jobCount()).toBe(jobs);
    const stored = await service.db.oneFirst(
      sql.unsafe`SELECT count(*)::int FROM write_receipts WHERE source = 'client' AND key = 'dry-then-real'`,
    );
    expect(stored).toBe(0);
    const real = await postGift('dry-then-real', gift());
    expect(real.status).toBe(201);
    expect(real.headers.get('idempotent-replayed')).toBeNull();
    expect(real.body.id).toBeGreaterThan(0);
    const { id: _dryId, created_at: _c1, updated_at: _u1, ...dryRest } = dry.body;
    const { id: _realId, created_at: _c2, updated_at: _u2, ...realRest } = real.body;
    expect(dryRest).toEqual(realRest);
  });

  test('a dry run with a used key neither replays nor conflicts', async () => {
    await postGift('used-then-dry', gift());
    const dry = await postGift('used-then-dry', gift({ amount: 999 }), { dryRun: true });
    expect(dry.status).toBe(201);
    expect(dry.body.id).toBe(0);
    expect(dry.headers.get('idempotent-replayed')).toBeNull();
  });
});

describe('scope', () => {
  test('keys belong to an institution: another institution using the same key gets its own write', async () => {
    const other = await service.createTenant('Other College');
    const otherDonor = await service.call<Body>('POST', '/api/v1/donors', {
      key: other.key,
      body: { role: 'Organization', organization_name: 'Acme Corp', email: 'giving@acme.example' },
    });
    const mine = await postGift('shared-key', gift());
    const theirs = await postGift('shared-key', gift({ donor_id: otherDonor.body.id }), {
      apiKey: other.key,
    });
    expect(mine.status).toBe(201);
    expect(theirs.status).toBe(201);
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
    expect(theirs.body.id).not.toBe(mine.body.id);
  });

  test('two API keys of one institution share keys', async () => {
    const second = await insertApiKey(service.db, service.tenant.institutionId);
    const first = await postGift('two-api-keys', gift());
    const replay = await postGift('two-api-keys', gift(), { apiKey: second.key });
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body.id).toBe(first.body.id);
  });
});

describe('in flight', () => {
  test('while the first call runs, the same key is 409 and a different body is 422; afterwards it replays', async () => {
    const worker = service.workers[0]!.worker;
    await worker.pause();
    const lockKey = lockKeyFor(service.config, service.tenant.institutionId, 'in-flight-1');
    const first = postGift('in-flight-1', gift({ subject: 'Held' }));
    await waitFor(
      async () => (await service.redis.exists(lockKey)) === 1,
      5_000,
      'the in-flight lock',
    );
    const same = await postGift('in-flight-1', gift({ subject: 'Held' }));
    const different = await postGift('in-flight-1', gift({ subject: 'Other' }));
    worker.resume();
    const original = await first;

    expect(same.status).toBe(409);
    expect(same.body.error).toMatchObject({
      type: 'idempotency_error',
      code: 'idempotency_key_in_flight',
    });
    expect(different.status).toBe(422);
    expect(different.body.error?.code).toBe('idempotency_key_request_mismatch');
    expect(original.status).toBe(201);
    const retried = await postGift('in-flight-1', gift({ subject: 'Held' }));
    expect(retried.status).toBe(201);
    expect(retried.headers.get('idempotent-replayed')).toBe('true');
    expect(retried.body.id).toBe(original.body.id);
    // The lease became the key's done marker, holding no lease token, kept only for the
    // retention window: Redis memory follows the writes of the last minutes, not of a day.
    expect(await service.redis.get(lockKey)).toMatch(/^done:/);
    const markerTtl = await service.redis.ttl(lockKey);
    expect(markerTtl).toBeGreaterThan(0);
    expect(markerTtl).toBeLessThanOrEqual(DONE_MARKER_SECONDS);
  });

  test('a write still waiting for a worker keeps its key held past the first, short lease', async () => {
    const worker = service.workers[0]!.worker;
    await worker.pause();
    const lockKey = lockKeyFor(service.config, service.tenant.institutionId, 'slow-1');
    const first = postGift('slow-1', gift({ subject: 'Slow' }));
    try {
      await waitFor(
        async () => (await service.redis.exists(lockKey)) === 1,
        5_000,
        'the in-flight lock',
      );
      expect(await service.redis.pttl(lockKey)).toBeLessThanOrEqual(LEASE_UNTIL_QUEUED_MS);
      // Once the API has waited EXTEND_AFTER_MS for its queued job, the lease is the long one.
      await waitFor(
        async () => (await service.redis.pttl(lockKey)) > LEASE_UNTIL_QUEUED_MS,
        EXTEND_AFTER_MS + 2_000,
        'the extended lease',
      );
      await sleep(LEASE_UNTIL_QUEUED_MS);
      const same = await postGift('slow-1', gift({ subject: 'Slow' }));
      expect(same.status).toBe(409);
    } finally {
      worker.resume();
    }
    const original = await first;
    expect(original.status).toBe(201);
    expect(await service.redis.get(lockKey)).toMatch(/^done:/);
  });

  test('20 concurrent requests with one key create exactly one row', async () => {
    const before = await giftCount();
    const responses = await Promise.all(
      Array.from({ length: 20 }, () => postGift('concurrent-key', gift({ subject: 'Concurrent' }))),
    );
    const statuses = responses.map((response) => response.status);
    expect(statuses.every((status) => status === 201 || status === 409)).toBe(true);
    const created = responses.filter((response) => response.status === 201);
    expect(
      created.filter((response) => response.headers.get('idempotent-replayed') === null),
    ).toHaveLength(1);
    expect(new Set(created.map((response) => response.body.id)).size).toBe(1);
    expect(await giftCount()).toBe(before + 1);
  });

  test('20 concurrent creates with one email create one donor and 19 clean 422s', async () => {
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        service.call<Body>('POST', '/api/v1/donors', {
          body: {
            role: 'Individual',
            first_name: 'Race',
            last_name: `Runner ${index}`,
            email: 'race@example.org',
          },
        }),
      ),
    );
    expect(responses.filter((response) => response.status === 201)).toHaveLength(1);
    const refused = responses.filter((response) => response.status === 422);
    expect(refused).toHaveLength(19);
    for (const response of refused) {
      expect(response.body.error).toMatchObject({
        code: 'validation_failed',
        errors: [{ param: 'email', code: 'already_in_use', message: expect.any(String) }],
      });
    }
    const stored = await service.db.oneFirst(
      sql.unsafe`SELECT count(*)::int FROM donors WHERE lower(email) = 'race@example.org'`,
    );
    expect(stored).toBe(1);
  });
});

describe('the done marker in Redis is a shortcut, Postgres the record', () => {
  const markerOf = (key: string) => lockKeyFor(service.config, service.tenant.institutionId, key);

  test('a finished write leaves the done marker before it is answered: a retry replays without a job', async () => {
    const first = await postGift('settled', gift({ subject: 'Settled' }));
    expect(first.status).toBe(201);
    // The worker settled the lease before its job completed.
    expect(await service.redis.get(markerOf('settled'))).toMatch(/^done:/);
    const jobs = await jobCount();
    const retry = await postGift('settled', gift({ subject: 'Settled' }));
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.body).toEqual(first.body);
    expect(await jobCount()).toBe(jobs);
    expect(await service.redis.get(markerOf('settled'))).toMatch(/^done:/);
    const ttl = await service.redis.ttl(markerOf('settled'));
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(DONE_MARKER_SECONDS);
  });

  test('a refused write frees its key before it is answered', async () => {
    const refused = await postGift('refused-frees', gift({ amount: -1 }));
    expect(refused.status).toBe(422);
    expect(await service.redis.exists(markerOf('refused-frees'))).toBe(0);
  });

  test(`a lease whose job was never queued holds the key for at most ${LEASE_UNTIL_QUEUED_MS} ms`, async () => {
    // As left by an API process that died between taking the lease and queueing the job.
    const takenAt = Date.now();
    const [taken] = await acquireLeases(service.redis, [
      {
        key: markerOf('never-queued'),
        token: newLockToken('other', 'req_never_queued'),
        trustDone: true,
      },
    ]);
    expect(taken?.state).toBe('acquired');
    // Redis itself ends the lease: its time to live is the bound, whatever the machine's load.
    expect(await service.redis.pttl(markerOf('never-queued'))).toBeLessThanOrEqual(
      LEASE_UNTIL_QUEUED_MS,
    );
    const held = await postGift('never-queued', gift({ subject: 'Never queued' }));
    expect(held.status).toBe(422);
    expect(held.body.error?.code).toBe('idempotency_key_request_mismatch');
    await waitFor(
      async () => (await service.redis.exists(markerOf('never-queued'))) === 0,
      LEASE_UNTIL_QUEUED_MS + 2_000,
      'the lease to run out',
    );
    expect(Date.now() - takenAt).toBeLessThanOrEqual(LEASE_UNTIL_QUEUED_MS + 1_000);
    const before = await giftCount();
    const freed = await postGift('never-queued', gift({ subject: 'Never queued' }));
    expect(freed.status).toBe(201);
    expect(freed.headers.get('idempotent-replayed')).toBeNull();
    expect(await giftCount()).toBe(before + 1);
  });

  test('a retry whose marker is gone (Redis lost it) still replays, through a worker', async () => {
    const first = await postGift('marker-lost', gift({ subject: 'Marker lost' }));
    expect(first.status).toBe(201);
    expect(await service.redis.get(markerOf('marker-lost'))).toMatch(/^done:/);
    await service.redis.del(markerOf('marker-lost'));
    const before = { gifts: await giftCount(), jobs: await jobCount() };

    const retry = await postGift('marker-lost', gift({ subject: 'Marker lost' }));
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.body).toEqual(first.body);
    expect(await giftCount()).toBe(before.gifts);
    expect(await jobCount()).toBe(before.jobs + 1);

    const other = await postGift('marker-lost', gift({ subject: 'Another body' }));
    expect(other.status).toBe(422);
    expect(other.body.error?.code).toBe('idempotency_key_request_mismatch');
  });

  test('a marker that outlived its receipt does not hold the key: the retry is a new write', async () => {
    const first = await postGift('receipt-gone', gift({ subject: 'Receipt gone' }));
    expect(first.status).toBe(201);
    const replay = await postGift('receipt-gone', gift({ subject: 'Receipt gone' }));
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    await service.db.query(sql.unsafe`
      UPDATE write_receipts SET expires_at = now() - interval '1 second'
      WHERE institution_id = ${service.tenant.institutionId} AND key = 'receipt-gone'`);
    expect(await service.redis.get(markerOf('receipt-gone'))).toMatch(/^done:/);
    const before = await giftCount();

    const again = await postGift('receipt-gone', gift({ subject: 'Receipt gone' }));
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBeNull();
    expect(again.body.id).not.toBe(first.body.id);
    expect(await giftCount()).toBe(before + 1);
  });
});

describe('expiry', () => {
  let shortLived: TestService;
  beforeAll(async () => {
    shortLived = await startTestService({ IDEMPOTENCY_TTL_SECONDS: '1' });
  });
  afterAll(async () => {
    await shortLived?.close();
  });

  test('after the window the same key is a new request', async () => {
    const donor = await shortLived.call<Body>('POST', '/api/v1/donors', {
      body: { role: 'Individual', first_name: 'Ada', last_name: 'Byron', email: 'ada@example.org' },
    });
    const body = gift({ donor_id: donor.body.id });
    const post = () =>
      shortLived.call<Body>('POST', '/api/v1/gifts', {
        body,
        headers: { 'Idempotency-Key': 'expiring' },
      });
    const first = await post();
    const replay = await post();
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    await sleep(1_200);
    const fresh = await post();
    expect(fresh.status).toBe(201);
    expect(fresh.headers.get('idempotent-replayed')).toBeNull();
    expect(fresh.body.id).not.toBe(first.body.id);
    expect(await shortLived.count('gifts')).toBe(2);
    const changed = await shortLived.call<Body>('POST', '/api/v1/gifts', {
      body: { ...body, amount: 1 },
      headers: { 'Idempotency-Key': 'expiring' },
    });
    expect(changed.status).toBe(422);
    await sleep(1_200);
    const afterSecondExpiry = await shortLived.call<Body>('POST', '/api/v1/gifts', {
      body: { ...body, amount: 1 },
      headers: { 'Idempotency-Key': 'expiring' },
    });
    expect(afterSecondExpiry.status).toBe(201);
  });
});
