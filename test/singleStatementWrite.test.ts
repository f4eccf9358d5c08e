import { sql } from 'slonik';
import { z } from 'zod';
import { lockKeyFor } from '../common/idempotency/lock.js';
import { insertApiKey } from '../common/institutions.js';
import { revokeUnannounced } from './helpers/revocation.js';
import { startTestService, type Tenant, type TestService } from './helpers/harness.js';
import { created, ISO_MS } from './helpers/responses.js';
import { newDonor } from './helpers/singleStatement.js';

/**
 * A gift that names no fund is created in one statement together with its receipt (runWrite's
 * commitInOneStatement); anything that statement refuses is judged again by the full
 * transaction. These tests hold what a client sees, and what is stored, to what the transaction
 * path promises: the answer is the record as stored, a replay is the same answer byte for byte,
 * every error is reported at once, and anything refused writes nothing.
 */
type Body = Record<string, unknown> & {
  id: number;
  error?: { code: string; errors?: { param: string; code: string }[] };
};

let service: TestService;
let other: Tenant;
let donorId: number;
let otherDonorId: number;
let fundId: number;

const giftBody = (overrides: Record<string, unknown> = {}): Record<string, unknown> => ({
  donor_id: donorId,
  amount: 120.5,
  subject: 'Spring appeal',
  gift_date: '2026-04-01',
  ...overrides,
});

const postGift = (key: string, body: Record<string, unknown>, apiKey?: string) =>
  service.call<Body>('POST', '/api/v1/gifts', {
    ...(apiKey ? { key: apiKey } : {}),
    body,
    headers: { 'Idempotency-Key': key },
  });

const storedReceipt = (key: string) =>
  service.db.maybeOne(sql.type(z.object({ text: z.string(), location: z.string().nullable() }))`
    SELECT response_body::text AS text, location FROM write_receipts
    WHERE institution_id = ${service.tenant.institutionId} AND source = 'client' AND key = ${key}`);

const giftCount = () => service.count('gifts', service.tenant.institutionId);

beforeAll(async () => {
  service = await startTestService();
  other = await service.createTenant('Other College', 'USD');
  donorId = (await newDonor(service)).id;
  otherDonorId = (await newDonor(service, other.key)).id;
  fundId = (
    await created<{ id: number }>(
      service.call('POST', '/api/v1/funds', { body: { name: 'General', code: 'GEN' } }),
    )
  ).id;
});

afterAll(async () => {
  await service?.close();
});

describe('what is answered is what is stored', () => {
  test('the answer is the record read back, and the receipt holds the answer byte for byte', async () => {
    const response = await postGift('one-a', giftBody({ type: 'check', check_number: 'A-17' }));
    expect(response.status).toBe(201);
    const id = response.body.id;
    expect(response.headers.get('location')).toBe(`/api/v1/gifts/${id}`);
    expect(response.body).toEqual({
      id,
      object: 'gift',
      donor_id: donorId,
      recurring_gift_id: null,
      amount: 120.5,
      currency: 'USD',
      exchange_rate: 1,
      base_amount: 120.5,
      subject: 'Spring appeal',
      gift_date: '2026-04-01',
      type: 'check',
      check_number: 'A-17',
      fund_id: null,
      designations: [],
      soft_credits: [],
      matches_gift_id: null,
      matched_by_gift_ids: [],
      benefit_amount: 0,
      status: 'posted',
      amount_refunded: 0,
      net_amount: 120.5,
      void_reason: null,
      voided_at: null,
      pledge_id: null,
      tribute: null,
      campaign_id: null,
      appeal_id: null,
      created_at: expect.stringMatching(ISO_MS),
      updated_at: expect.stringMatching(ISO_MS),
    });
    const read = await service.call('GET', `/api/v1/gifts/${id}`);
    expect(read.body).toEqual(response.body);
    expect(await storedReceipt('one-a')).toEqual({
      text: JSON.stringify(response.body),
      location: `/api/v1/gifts/${id}`,
    });
    const replay = await postGift('one-a', giftBody({ type: 'check', check_number: 'A-17' }));
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(JSON.stringify(replay.body)).toBe(JSON.stringify(response.body));
  });

  test('a gift naming a fund answers the same shape of record', async () => {
    const response = await postGift('with-fund', giftBody({ fund_id: fundId }));
    expect(response.status).toBe(201);
    expect(response.body.fund_id).toBe(fundId);
    const read = await service.call('GET', `/api/v1/gifts/${response.body.id}`);
    expect(read.body).toEqual(response.body);
    expect((await storedReceipt('with-fund'))?.text).toBe(JSON.stringify(response.body));
  });

  test('timestamps are answered exactly as the API reads them back, whatever their milliseconds', async () => {
    const responses = await Promise.all(
      Array.from({ length: 25 }, (_, index) =>
        postGift(`ms-${index}`, giftBody({ subject: `Gift ${index}` })),
      ),
    );
    for (const response of responses) {
      expect(response.status).toBe(201);
      const read = await service.call<Body>('GET', `/api/v1/gifts/${response.body.id}`);
      expect([response.body.created_at, response.body.updated_at]).toEqual([
        read.body.created_at,
        read.body.updated_at,
      ]);
    }
  });

  test('client text that spells a stand-in for a server-assigned value is stored and answered as sent', async () => {
    const subject = '"\\u0000id" "\\u0000created_at" \\u0000updated_at';
    const response = await postGift('spelled', giftBody({ subject }));
    expect(response.status).toBe(201);
    expect(response.body.subject).toBe(subject);
    expect(response.body.id).toEqual(expect.any(Number));
    expect((await storedReceipt('spelled'))?.text).toBe(JSON.stringify(response.body));
  });
});

describe('what is refused writes nothing', () => {
  test('every error of a body is reported at once, and nothing is written', async () => {
    const before = await giftCount();
    const response = await postGift(
      'all-errors',
      giftBody({ amount: -1, donor_id: undefined, check_number: '12' }),
    );
    expect(response.status).toBe(422);
    expect(response.body.error?.errors?.map((error) => error.param).sort()).toEqual([
      'amount',
      'check_number',
      'donor_id',
    ]);
    expect(await giftCount()).toBe(before);
    expect(await storedReceipt('all-errors')).toBeNull();
  });

  test('a donor of another institution, or none, is reference_not_found: no gift, no receipt', async () => {
    const before = await giftCount();
    for (const [key, id] of [
      ['foreign-donor', otherDonorId],
      ['missing-donor', 987_654_321],
    ] as const) {
      const response = await postGift(key, giftBody({ donor_id: id }));
      expect(response.status).toBe(422);
      expect(response.body.error?.errors).toEqual([
        expect.objectContaining({ param: 'donor_id', code: 'reference_not_found' }),
      ]);
      expect(await storedReceipt(key)).toBeNull();
    }
    expect(await giftCount()).toBe(before);
    expect(await service.count('gifts', other.institutionId)).toBe(0);
    // The key stayed free: the corrected body succeeds under it.
    const retry = await postGift('foreign-donor', giftBody());
    expect(retry.status).toBe(201);
    expect(await giftCount()).toBe(before + 1);
  });

  test('a key that already holds a receipt writes no second gift, even when the retry reaches a worker', async () => {
    const first = await postGift('taken', giftBody({ subject: 'First' }));
    expect(first.status).toBe(201);
    const marker = lockKeyFor(service.config, service.tenant.institutionId, 'taken');
    const before = await giftCount();

    await service.redis.del(marker);
    const changed = await postGift('taken', giftBody({ subject: 'Second try' }));
    expect(changed.status).toBe(422);
    expect(changed.body.error?.code).toBe('idempotency_key_request_mismatch');
    await service.redis.del(marker);
    const same = await postGift('taken', giftBody({ subject: 'First' }));
    expect(same.headers.get('idempotent-replayed')).toBe('true');
    expect(JSON.stringify(same.body)).toBe(JSON.stringify(first.body));

    expect(await giftCount()).toBe(before);
    expect((await storedReceipt('taken'))?.text).toBe(JSON.stringify(first.body));
  });

  test('a write admitted on an API key revoked since is 401: no gift, no receipt', async () => {
    const doomed = await insertApiKey(service.db, service.tenant.institutionId);
    // Confirmed now, so that the API admits its next write without asking Postgres.
    expect((await service.call('GET', '/api/v1/institution', { key: doomed.key })).status).toBe(
      200,
    );
    // Without the notice that would make the API forget the key: only the worker refuses it.
    await revokeUnannounced(service.db, doomed.id);
    const before = await giftCount();
    const response = await postGift('revoked', giftBody(), doomed.key);
    expect(response.status).toBe(401);
    expect(response.body.error?.code).toBe('invalid_api_key');
    expect(await giftCount()).toBe(before);
    expect(await storedReceipt('revoked')).toBeNull();
  });
});
