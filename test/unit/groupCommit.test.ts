import { sql } from 'slonik';
import type { CreatedOutcome, ReceiptedCreate } from '../../common/idempotency/receipts.js';
import { GroupCommit } from '../../worker/groupCommit.js';

/**
 * The worker's group commit on its own, with a stand-in for the statement: which creates share
 * a statement, in which order, and what each is answered when a statement fails. What the shared
 * statement writes is tested through the API (test/groupCommit.test.ts).
 */

const create = (key: string, institutionId = 1): ReceiptedCreate => ({
  create: { insert: () => sql.fragment``, fields: {}, present: () => ({}), path: '/api/v1/gifts' },
  apiKeyId: 'key_1',
  receipt: { institutionId, source: 'client', key },
  fingerprint: `fp-${key}`,
  ttlSeconds: 60,
  event: { type: 'gift.created', objectType: 'gift', requestId: `req_${key}`, apiKeyId: 'key_1' },
});

const outcomeOf = (item: ReceiptedCreate): CreatedOutcome => ({
  status: 201,
  body: { key: item.receipt.key },
  location: `/api/v1/gifts/${item.receipt.key}`,
});

/**
 * A statement that takes `delayMs`, records the keys of each call, refuses any call holding a
 * key in `refuse`, and answers null for a key in `unguarded` (its guard did not hold).
 */
function fakeStatement(
  options: { refuse?: string[]; unguarded?: string[]; delayMs?: number } = {},
) {
  const calls: string[][] = [];
  const insert = async (items: readonly ReceiptedCreate[]) => {
    const keys = items.map((item) => item.receipt.key);
    calls.push(keys);
    await new Promise((resolve) => setTimeout(resolve, options.delayMs ?? 5));
    if (keys.some((key) => options.refuse?.includes(key))) throw new Error('refused');
    return items.map((item) =>
      options.unguarded?.includes(item.receipt.key) ? null : outcomeOf(item),
    );
  };
  return { insert, calls };
}

test('creates that arrive while a statement runs go out together in the next one, each answered with its own outcome', async () => {
  const statement = fakeStatement();
  const counted: number[] = [];
  const group = new GroupCommit(statement.insert, (creates) => counted.push(creates));
  const keys = Array.from({ length: 10 }, (_, index) => `k${index}`);
  const outcomes = await Promise.all(keys.map((key) => group.commit(create(key))));

  expect(statement.calls).toEqual([['k0'], keys.slice(1)]);
  expect(counted).toEqual([1, 9]);
  expect(outcomes.map((outcome) => outcome?.body.key)).toEqual(keys);
});

test("a statement holds one institution's creates, in one order of receipt, so that two statements never wait on each other", async () => {
  const statement = fakeStatement();
  // One statement at a time over every institution, so that 2's creates gather behind 'first'.
  const group = new GroupCommit(statement.insert, () => {}, 1, 32, 1);
  const items = [create('first'), create('b', 2), create('c'), create('a', 2), create('a')];
  const outcomes = await Promise.all(items.map((item) => group.commit(item)));

  // One institution a statement: the oldest waiting create's (2) goes first.
  expect(statement.calls).toEqual([['first'], ['a', 'b'], ['a', 'c']]);
  // Answers still reach the create that asked.
  expect(outcomes.map((outcome) => outcome?.body.key)).toEqual(['first', 'b', 'c', 'a', 'a']);
});

test('a failed statement is tried again one create at a time: only the refused create fails', async () => {
  const statement = fakeStatement({ refuse: ['k2'] });
  const group = new GroupCommit(statement.insert);
  const settled = await Promise.allSettled(
    ['k0', 'k1', 'k2', 'k3'].map((key) => group.commit(create(key))),
  );

  expect(statement.calls).toEqual([['k0'], ['k1', 'k2', 'k3'], ['k1'], ['k2'], ['k3']]);
  expect(settled.map((result) => result.status)).toEqual([
    'fulfilled',
    'fulfilled',
    'rejected',
    'fulfilled',
  ]);
  expect((settled[2] as PromiseRejectedResult).reason).toEqual(new Error('refused'));
});

test('a create whose guard did not hold is answered null; the others of its statement are not', async () => {
  const statement = fakeStatement({ unguarded: ['k2'] });
  const group = new GroupCommit(statement.insert);
  const outcomes = await Promise.all(['k0', 'k1', 'k2'].map((key) => group.commit(create(key))));

  expect(statement.calls).toEqual([['k0'], ['k1', 'k2']]);
  expect(outcomes.map((outcome) => outcome?.body.key ?? null)).toEqual(['k0', 'k1', null]);
});

test('a statement carries at most maxBatch creates, and at most maxInFlight statements run at once', async () => {
  const statement = fakeStatement();
  let running = 0;
  let mostRunning = 0;
  const insert = async (items: readonly ReceiptedCreate[]) => {
    running += 1;
    mostRunning = Math.max(mostRunning, running);
    try {
      return await statement.insert(items);
    } finally {
      running -= 1;
    }
  };
  const group = new GroupCommit(insert, () => {}, 2, 3);
  const keys = Array.from({ length: 9 }, (_, index) => `k${index}`);
  const outcomes = await Promise.all(keys.map((key) => group.commit(create(key))));

  expect(statement.calls.map((call) => call.length)).toEqual([1, 1, 3, 3, 1]);
  expect(statement.calls.flat().sort()).toEqual(keys);
  expect(mostRunning).toBe(2);
  expect(outcomes.map((outcome) => outcome?.body.key)).toEqual(keys);
});

test('creates of two institutions never share a statement; their statements run side by side, one at a time each, in each one’s order of arrival', async () => {
  const statement = fakeStatement();
  const group = new GroupCommit(statement.insert, () => {}, 1, 3);
  const items = [
    create('x0', 1),
    create('y1', 2),
    create('x1', 1),
    create('y2', 2),
    create('x2', 1),
    create('x3', 1),
    create('x4', 1),
    create('y3', 2),
  ];
  const outcomes = await Promise.all(items.map((item) => group.commit(item)));

  // y1 does not wait for x0's statement; x1 waits for it, with the creates of 1 behind it.
  expect(statement.calls).toEqual([['x0'], ['y1'], ['x1', 'x2', 'x3'], ['y2', 'y3'], ['x4']]);
  expect(outcomes.map((outcome) => outcome?.body.key)).toEqual(
    items.map((item) => item.receipt.key),
  );
});
