/**
 * The client library (sdk/) against the real service: API, BullMQ worker, PostgreSQL and Redis.
 * The rate limit is low here, so that a burst of the client's own is limited and still succeeds.
 */
import { sql } from 'slonik';
import { errors, shouldRetryOf } from '../common/errors.js';
import {
  DonorGift,
  IdempotencyError,
  InvalidRequestError,
  type FetchLike,
} from '../sdk/src/index.js';
import { giftBody, giftRow, ids, other, service, setUpGiftTests } from './helpers/gifts.js';
import { TcpProxy } from './helpers/tcpProxy.js';

const RATE_LIMIT = 20;
setUpGiftTests({ RATE_LIMIT_PER_SECOND: String(RATE_LIMIT) });

const clientOf = (options: { baseUrl?: string; fetch?: FetchLike; maxRetries?: number } = {}) =>
  new DonorGift({ apiKey: service.tenant.key, baseUrl: service.url, ...options });

const body = (overrides: Record<string, unknown> = {}) =>
  giftBody(overrides) as { donor_id: number; amount: number; subject: string; gift_date: string };

const giftsOf = (donorId: number) =>
  service.db.oneFirst(
    sql.unsafe`SELECT count(*)::int FROM gifts WHERE donor_id = ${donorId}`,
  ) as Promise<number>;

async function newDonor(email: string): Promise<number> {
  const donor = await clientOf().donors.create({
    role: 'Individual',
    first_name: 'Mary',
    last_name: 'Somerville',
    email,
  });
  return donor.id;
}

test('a dry run answers as the create would and writes nothing; the create then writes one gift', async () => {
  const client = clientOf();
  const before = await service.count('gifts');
  const dry = await client.gifts.create(body({ subject: 'Dry' }), { dryRun: true });
  expect(dry).toMatchObject({ id: 0, object: 'gift', subject: 'Dry', amount: 25 });
  expect(dry.lastResponse).toMatchObject({ status: 201, idempotentReplayed: false });
  expect(await service.count('gifts')).toBe(before);

  const gift = await client.gifts.create(body({ subject: 'Real' }));
  expect(gift.id).toBeGreaterThan(0);
  expect(gift.lastResponse).toEqual({
    requestId: expect.stringMatching(/^req_[0-9a-f]{24}$/),
    status: 201,
    idempotentReplayed: false,
  });
  expect(Object.keys(gift)).not.toContain('lastResponse');
  expect(await giftRow(gift.id)).toMatchObject({ subject: 'Real', amount: '25.00' });
  expect(await service.count('gifts')).toBe(before + 1);
  await expect(client.gifts.retrieve(gift.id)).resolves.toEqual(gift);
});

test('the same key replays the first answer; with another body it is an IdempotencyError', async () => {
  const client = clientOf();
  const before = await service.count('gifts');
  const first = await client.gifts.create(body({ subject: 'Keyed' }), { idempotencyKey: 'sdk-1' });
  const again = await client.gifts.create(body({ subject: 'Keyed' }), { idempotencyKey: 'sdk-1' });
  expect(again).toEqual(first);
  expect(again.lastResponse.idempotentReplayed).toBe(true);
  const mismatch = await client.gifts
    .create(body({ subject: 'Other' }), { idempotencyKey: 'sdk-1' })
    .catch((error: unknown) => error);
  expect(mismatch).toBeInstanceOf(IdempotencyError);
  expect(mismatch).toMatchObject({
    status: 422,
    code: 'idempotency_key_request_mismatch',
    shouldRetry: false,
  });
  expect(await service.count('gifts')).toBe(before + 1);
});

test('a refused write and another institution’s record are typed errors; 422 says Should-Retry: false', async () => {
  const client = clientOf();
  const before = await service.count('gifts');
  const invalid = await client.gifts.create(body({ amount: -1 })).catch((error: unknown) => error);
  expect(invalid).toBeInstanceOf(InvalidRequestError);
  expect(invalid).toMatchObject({
    status: 422,
    code: 'validation_failed',
    param: 'amount',
    shouldRetry: false,
    errors: [expect.objectContaining({ param: 'amount', code: 'out_of_range' })],
  });
  expect(await service.count('gifts')).toBe(before);
  const theirs = await client.gifts.retrieve(ids.otherGift).catch((error: unknown) => error);
  expect(theirs).toMatchObject({ status: 404, code: 'resource_not_found', shouldRetry: null });
  await expect(
    new DonorGift({ apiKey: other.key, baseUrl: service.url }).gifts.retrieve(ids.otherGift),
  ).resolves.toMatchObject({ id: ids.otherGift });

  const raw = await service.call('POST', '/api/v1/gifts', { body: { donor_id: ids.donor } });
  expect([raw.status, raw.headers.get('Should-Retry')]).toEqual([422, 'false']);
  const missing = await service.call('GET', '/api/v1/gifts/999999');
  expect([missing.status, missing.headers.get('Should-Retry')]).toEqual([404, null]);
});

test('Should-Retry is true where the status alone would not say it', () => {
  expect(shouldRetryOf(errors.idempotencyKeyInFlight())).toBe('true');
  expect(shouldRetryOf(errors.serviceUnavailable())).toBe('true');
  expect(shouldRetryOf(errors.idempotencyKeyMismatch())).toBe('false');
  expect(shouldRetryOf(errors.giftLocked('locked'))).toBeNull();
  expect(shouldRetryOf(errors.writeTimeout())).toBeNull();
});

test('paging a filtered list both ways follows the service’s cursors and skips no gift', async () => {
  const client = clientOf();
  const donorId = await newDonor('paging@example.org');
  const made: number[] = [];
  for (const amount of [1, 2, 3, 4, 5])
    made.push((await client.gifts.create(body({ donor_id: donorId, amount }))).id);
  const newestFirst = [...made].reverse();

  const seen: number[] = [];
  for await (const gift of client.gifts.list({ donor_id: donorId, limit: 2 })) seen.push(gift.id);
  expect(seen).toEqual(newestFirst);
  const all = await client.gifts.list({ donor_id: donorId, limit: 2 }).toArray({ max: 4 });
  expect(all.map((gift) => gift.id)).toEqual(newestFirst.slice(0, 4));

  // Forward a page at a time, then back from the last page with its previous_cursor.
  const first = await client.gifts.list({ donor_id: donorId, limit: 2 });
  const second = await client.gifts.list({ starting_after: first.next_cursor!, limit: 2 });
  const third = await client.gifts.list({ starting_after: second.next_cursor!, limit: 2 });
  expect([first, second, third].map((page) => page.data.map((gift) => gift.id))).toEqual([
    newestFirst.slice(0, 2),
    newestFirst.slice(2, 4),
    newestFirst.slice(4),
  ]);
  expect(third).toMatchObject({ has_more: false, next_cursor: null });
  const back = await client.gifts.list({ ending_before: third.previous_cursor!, limit: 2 });
  expect(back.data.map((gift) => gift.id)).toEqual(newestFirst.slice(2, 4));
  const start = await client.gifts.list({ ending_before: back.previous_cursor!, limit: 2 });
  expect(start.data.map((gift) => gift.id)).toEqual(newestFirst.slice(0, 2));
});

test('a connection dropped after the commit: the retry replays, and there is exactly one gift', async () => {
  const proxy = new TcpProxy(Number(new URL(service.url).port));
  const port = await proxy.start();
  try {
    const donorId = await newDonor('dropped@example.org');
    const client = clientOf({ baseUrl: `http://127.0.0.1:${port}` });
    proxy.dropAnswers(1);
    const gift = await client.gifts.create(body({ donor_id: donorId, subject: 'Lost answer' }));
    expect(gift.lastResponse).toMatchObject({ status: 201, idempotentReplayed: true });
    expect(await giftsOf(donorId)).toBe(1);
    expect(await giftRow(gift.id)).toMatchObject({ donor_id: donorId, subject: 'Lost answer' });
  } finally {
    await proxy.stop();
  }
});

test('a burst past the rate limit is answered 429 and still succeeds, every call', async () => {
  const statuses: number[] = [];
  const counting: FetchLike = async (url, init) => {
    const response = await fetch(url, init);
    statuses.push(response.status);
    return response;
  };
  const giftId = (await clientOf().gifts.create(body({ subject: 'Burst' }))).id;
  const client = clientOf({ fetch: counting, maxRetries: 5 });
  const burst = RATE_LIMIT * 3;
  const read = await Promise.all(
    Array.from({ length: burst }, () => client.gifts.retrieve(giftId)),
  );
  expect(read.every((gift) => gift.id === giftId)).toBe(true);
  expect(statuses.filter((status) => status === 429).length).toBeGreaterThan(0);
  expect(statuses.filter((status) => status === 200)).toHaveLength(burst);
});
