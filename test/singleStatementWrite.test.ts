import { IntegrityConstraintViolationError, sql } from 'slonik';
import { z } from 'zod';
import { liveKey } from '../common/auth/liveKey.js';
import type { SingleStatementCreate } from '../common/commands/command.js';
import { insertApiKey, revokeApiKey } from '../common/institutions.js';
import { insertWithReceipt, type ReceiptKey } from '../common/idempotency/receipts.js';
import { startTestService, type Tenant, type TestService } from './helpers/harness.js';
import { created, ISO_MS } from './helpers/responses.js';
import { giftStatement, newDonor } from './helpers/singleStatement.js';

/**
 * A gift that names no fund is created in one statement together with its receipt (runWrite's
 * commitInOneStatement). These tests hold that path to what the transaction path promises: the
 * answer is the record as stored, a replay is the same answer, and anything refused writes
 * nothing.
 */
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

const receiptKey = (key: string): ReceiptKey => ({
  institutionId: service.tenant.institutionId,
  source: 'client',
  key,
});

const storedReceipt = (key: string) =>
  service.db.maybeOne(sql.type(z.object({ text: z.string(), location: z.string().nullable() }))`
    SELECT response_body::text AS text, location FROM write_receipts
    WHERE institution_id = ${service.tenant.institutionId} AND source = 'client' AND key = ${key}`);

const giftCount = () => service.count('gifts', service.tenant.institutionId);

/** The statement as the worker runs it for the test tenant's key; null when the guard failed. */
const commitAs = (
  apiKeyId: string,
  create: SingleStatementCreate,
  key: ReceiptKey,
  fingerprint: string,
  ttlSeconds: number,
) =>
  insertWithReceipt(service.db, {
    create,
    guard: liveKey(apiKeyId),
    receipt: key,
    fingerprint,
    ttlSeconds,
  });

async function commit(
  create: SingleStatementCreate,
  key: ReceiptKey,
  fingerprint: string,
  ttlSeconds: number,
) {
  const outcome = await commitAs(service.tenant.apiKeyId, create, key, fingerprint, ttlSeconds);
  if (!outcome) throw new Error('the statement wrote nothing');
  return outcome;
}

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

describe('which gifts take one statement', () => {
  test('a valid body that names no fund does; one naming a fund, or with any error, does not', () => {
    expect(giftStatement(service, giftBody())).not.toBeNull();
    expect(giftStatement(service, giftBody({ fund_id: null }))).not.toBeNull();
    // A fund may be closed: only a lookup tells, so the transaction judges it.
    expect(giftStatement(service, giftBody({ fund_id: fundId }))).toBeNull();
    // Errors are reported by the full validation, all at once.
    expect(giftStatement(service, giftBody({ amount: -1 }))).toBeNull();
    expect(giftStatement(service, giftBody({ donor_id: undefined }))).toBeNull();
    expect(giftStatement(service, giftBody({ check_number: '12' }))).toBeNull();
  });
});

describe('the statement', () => {
  test('stores the gift and a receipt whose body is the answer, byte for byte', async () => {
    const create = giftStatement(service, giftBody({ type: 'check', check_number: 'A-17' }));
    const outcome = await commit(create!, receiptKey('one-a'), 'fp', 60);
    const id = Number(outcome.body.id);
    expect(outcome.status).toBe(201);
    expect(outcome.location).toBe(`/api/v1/gifts/${id}`);
    expect(outcome.body).toEqual({
      id,
      object: 'gift',
      donor_id: donorId,
      amount: 120.5,
      currency: 'USD',
      subject: 'Spring appeal',
      gift_date: '2026-04-01',
      type: 'check',
      check_number: 'A-17',
      fund_id: null,
      created_at: expect.stringMatching(ISO_MS),
      updated_at: expect.stringMatching(ISO_MS),
    });
    // The record as the API reads it back is the record answered.
    const read = await service.call('GET', `/api/v1/gifts/${id}`);
    expect(read.body).toEqual(outcome.body);
    const receipt = await storedReceipt('one-a');
    expect(receipt).toEqual({ text: JSON.stringify(outcome.body), location: outcome.location });
  });

  test('fills in the timestamps exactly as the API writes them, whatever their milliseconds', async () => {
    for (let index = 0; index < 25; index += 1) {
      const create = giftStatement(service, giftBody({ subject: `Gift ${index}` }));
      const outcome = await commit(create!, receiptKey(`ms-${index}`), 'fp', 60);
      const read = await service.call<Record<string, unknown>>(
        'GET',
        `/api/v1/gifts/${String(outcome.body.id)}`,
      );
      expect([outcome.body.created_at, outcome.body.updated_at]).toEqual([
        read.body.created_at,
        read.body.updated_at,
      ]);
    }
  });

  test('client text that spells a placeholder is stored and answered as sent', async () => {
    const subject = '"\\u0000id" "\\u0000created_at" \\u0000updated_at';
    const create = giftStatement(service, giftBody({ subject }));
    const outcome = await commit(create!, receiptKey('spelled'), 'fp', 60);
    expect(outcome.body.subject).toBe(subject);
    expect(outcome.body.id).toEqual(expect.any(Number));
    expect((await storedReceipt('spelled'))?.text).toBe(JSON.stringify(outcome.body));
  });

  test('a key that already holds a receipt refuses the whole statement: no second gift', async () => {
    const create = giftStatement(service, giftBody());
    await commit(create!, receiptKey('taken'), 'fp', 60);
    const before = await giftCount();
    const again = giftStatement(service, giftBody({ subject: 'Second try' }));
    await expect(commit(again!, receiptKey('taken'), 'fp', 60)).rejects.toBeInstanceOf(
      IntegrityConstraintViolationError,
    );
    expect(await giftCount()).toBe(before);
    expect((await storedReceipt('taken'))?.text).not.toContain('Second try');
  });

  test('a donor of another institution, or none, refuses the whole statement: no gift, no receipt', async () => {
    const before = await giftCount();
    for (const [key, id] of [
      ['foreign-donor', otherDonorId],
      ['missing-donor', 987_654_321],
    ] as const) {
      const create = giftStatement(service, giftBody({ donor_id: id }));
      await expect(commit(create!, receiptKey(key), 'fp', 60)).rejects.toBeInstanceOf(
        IntegrityConstraintViolationError,
      );
      expect(await storedReceipt(key)).toBeNull();
    }
    expect(await giftCount()).toBe(before);
    expect(await service.count('gifts', other.institutionId)).toBe(0);
  });

  test('a revoked API key inserts nothing: no gift, no receipt', async () => {
    const doomed = await insertApiKey(service.db, service.tenant.institutionId);
    await revokeApiKey(service.db, doomed.id);
    const before = await giftCount();
    const create = giftStatement(service, giftBody());
    expect(await commitAs(doomed.id, create!, receiptKey('revoked'), 'fp', 60)).toBeNull();
    expect(await giftCount()).toBe(before);
    expect(await storedReceipt('revoked')).toBeNull();
  });
});

describe('through the API', () => {
  test('a created gift reads back as answered, and its replay is the same answer', async () => {
    const headers = { 'Idempotency-Key': 'api-one' };
    const first = await service.call('POST', '/api/v1/gifts', { body: giftBody(), headers });
    expect(first.status).toBe(201);
    expect(first.headers.get('location')).toBe(`/api/v1/gifts/${String(first.body.id)}`);
    const read = await service.call('GET', `/api/v1/gifts/${String(first.body.id)}`);
    expect(read.body).toEqual(first.body);
    const replay = await service.call('POST', '/api/v1/gifts', { body: giftBody(), headers });
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.headers.get('location')).toBe(first.headers.get('location'));
    expect(replay.body).toEqual(first.body);
  });

  test('a refused statement falls back to the full judgement: every error at once, nothing written', async () => {
    const before = await giftCount();
    const response = await service.call<{ error: { errors: unknown[] } }>('POST', '/api/v1/gifts', {
      body: giftBody({ donor_id: otherDonorId }),
      headers: { 'Idempotency-Key': 'api-refused' },
    });
    expect(response.status).toBe(422);
    expect(response.body.error.errors).toEqual([
      expect.objectContaining({ param: 'donor_id', code: 'reference_not_found' }),
    ]);
    expect(await giftCount()).toBe(before);
    // The key stayed free: the corrected body succeeds under it.
    const retry = await service.call('POST', '/api/v1/gifts', {
      body: giftBody(),
      headers: { 'Idempotency-Key': 'api-refused' },
    });
    expect(retry.status).toBe(201);
    expect(await giftCount()).toBe(before + 1);
  });
});
