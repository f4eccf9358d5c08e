import { IntegrityConstraintViolationError, sql } from 'slonik';
import { z } from 'zod';
import { liveKey } from '../common/auth/liveKey.js';
import type { CreatedOutcome, ReceiptedCreate } from '../common/idempotency/receipts.js';
import { insertApiKey, revokeApiKey } from '../common/institutions.js';
import { GroupCommit } from '../worker/groupCommit.js';
import { startTestService, type Tenant, type TestService } from './helpers/harness.js';
import { giftStatement, newDonor } from './helpers/singleStatement.js';

/**
 * The worker's group commit: single-statement creates of concurrent jobs share one statement.
 * Each create must get the answer it would have had alone, and a refusal must reach only the
 * create it concerns.
 */
let service: TestService;
let other: Tenant;
let donorId: number;
let otherDonorId: number;

beforeAll(async () => {
  service = await startTestService();
  other = await service.createTenant('Other College', 'USD');
  donorId = (await newDonor(service)).id;
  otherDonorId = (await newDonor(service, other.key)).id;
});

afterAll(async () => {
  await service?.close();
});

/** A gift create as the worker hands it over, under receipt key `key`. */
function giftCreate(
  key: string,
  overrides: Record<string, unknown> = {},
  apiKeyId = service.tenant.apiKeyId,
): ReceiptedCreate {
  const create = giftStatement(service, {
    donor_id: donorId,
    amount: 40,
    subject: key,
    gift_date: '2026-06-01',
    ...overrides,
  });
  if (!create) throw new Error('expected a single-statement create');
  return {
    create,
    guard: liveKey(apiKeyId),
    receipt: { institutionId: service.tenant.institutionId, source: 'client', key },
    fingerprint: `fp-${key}`,
    ttlSeconds: 60,
  };
}

const giftsWithSubjectLike = (prefix: string) =>
  service.db.oneFirst(
    sql.type(z.object({ n: z.number() }))`
      SELECT count(*)::int AS n FROM gifts WHERE subject LIKE ${`${prefix}%`}`,
  );

const receiptsLike = (prefix: string) =>
  service.db.oneFirst(
    sql.type(z.object({ n: z.number() }))`
      SELECT count(*)::int AS n FROM write_receipts WHERE key LIKE ${`${prefix}%`}`,
  );

/** Commits all at once; the first goes out alone, the rest wait and go together. */
async function commitTogether(items: ReceiptedCreate[]) {
  const statements: number[] = [];
  const group = new GroupCommit(service.db, (creates) => statements.push(creates), 1);
  const settled = await Promise.allSettled(items.map((item) => group.commit(item)));
  return { settled, statements };
}

const value = (result: PromiseSettledResult<CreatedOutcome | null>) =>
  result.status === 'fulfilled' ? result.value : null;

test('creates that wait go out together, and each gets the answer it would have had alone', async () => {
  const items = Array.from({ length: 10 }, (_, index) => giftCreate(`together-${index}`));
  const { settled, statements } = await commitTogether(items);
  expect(statements).toEqual([1, 9]);
  for (const [index, result] of settled.entries()) {
    const outcome = value(result);
    expect(outcome?.body.subject).toBe(`together-${index}`);
    expect(outcome?.location).toBe(`/api/v1/gifts/${String(outcome?.body.id)}`);
    const read = await service.call('GET', outcome!.location);
    expect(read.body).toEqual(outcome!.body);
  }
  expect(new Set(settled.map((result) => value(result)?.body.id)).size).toBe(10);
  expect(await giftsWithSubjectLike('together-')).toBe(10);
  expect(await receiptsLike('together-')).toBe(10);
});

test('a refused create fails only itself: the others of its statement commit', async () => {
  const items = [
    giftCreate('refused-0'),
    giftCreate('refused-1'),
    giftCreate('refused-2', { donor_id: otherDonorId }),
    giftCreate('refused-3'),
  ];
  const { settled, statements } = await commitTogether(items);
  // The shared statement failed, so its three creates were each tried alone.
  expect(statements).toEqual([1, 3, 1, 1, 1]);
  expect(settled.map((result) => result.status)).toEqual([
    'fulfilled',
    'fulfilled',
    'rejected',
    'fulfilled',
  ]);
  const refused = settled[2] as PromiseRejectedResult;
  expect(refused.reason).toBeInstanceOf(IntegrityConstraintViolationError);
  expect(await giftsWithSubjectLike('refused-')).toBe(3);
  expect(await receiptsLike('refused-')).toBe(3);
  expect(await service.count('gifts', other.institutionId)).toBe(0);
});

test('a create whose API key was revoked writes nothing; the others of its statement commit', async () => {
  const doomed = await insertApiKey(service.db, service.tenant.institutionId);
  await revokeApiKey(service.db, doomed.id);
  const items = [
    giftCreate('revoked-0'),
    giftCreate('revoked-1'),
    giftCreate('revoked-2', {}, doomed.id),
  ];
  const { settled, statements } = await commitTogether(items);
  expect(statements).toEqual([1, 2]);
  expect(value(settled[0]!)).not.toBeNull();
  expect(value(settled[1]!)).not.toBeNull();
  expect(settled[2]).toEqual({ status: 'fulfilled', value: null });
  expect(await giftsWithSubjectLike('revoked-')).toBe(2);
  expect(await receiptsLike('revoked-2')).toBe(0);
});

test('two deliveries of one key in one statement: exactly one commits', async () => {
  const items = [giftCreate('first-alone'), giftCreate('twice'), giftCreate('twice')];
  const { settled } = await commitTogether(items);
  const twice = settled.slice(1);
  expect(twice.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
  expect(twice.filter((result) => result.status === 'rejected')).toHaveLength(1);
  expect(await giftsWithSubjectLike('twice')).toBe(1);
  expect(await receiptsLike('twice')).toBe(1);
});
