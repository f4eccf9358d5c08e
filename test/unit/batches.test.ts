import { Batches } from '../../worker/batches.js';

/**
 * The worker's statement batches on their own (the webhook deliveries' reads and outcomes), with
 * a stand-in for the statement: which items share a statement and what each is answered when a
 * statement fails. What the statements write is tested through the service
 * (test/webhooks.test.ts, test/faults/webhooks.test.ts).
 */

interface Item {
  group: number;
  id: number;
}

/** A statement that records each call's ids, fails a call holding an id in `refuse`. */
function fakeStatement(refuse: number[] = []) {
  const calls: number[][] = [];
  const run = async (items: readonly Item[]) => {
    const ids = items.map((item) => item.id);
    calls.push(ids);
    await new Promise((resolve) => setTimeout(resolve, 5));
    if (ids.some((id) => refuse.includes(id))) throw new Error(`refused ${ids.join(',')}`);
    return items.map((item) => item.id * 10);
  };
  return { run, calls };
}

const items = (group: number, ids: number[]) => ids.map((id) => ({ group, id }));

test('items that arrive while a statement runs share the next one, each answered its own result', async () => {
  const statement = fakeStatement();
  const batches = new Batches({ run: statement.run, groupOf: (item: Item) => item.group });
  const results = await Promise.all(items(1, [1, 2, 3, 4, 5]).map((i) => batches.submit(i)));

  expect(statement.calls).toEqual([[1], [2, 3, 4, 5]]);
  expect(results).toEqual([10, 20, 30, 40, 50]);
});

test("a statement holds one group's items, at most maxBatch of them, oldest group first", async () => {
  const statement = fakeStatement();
  const batches = new Batches({
    run: statement.run,
    groupOf: (item: Item) => item.group,
    maxBatch: 2,
  });
  await Promise.all(
    [{ group: 1, id: 1 }, ...items(2, [2, 3]), ...items(1, [4, 5, 6])].map((i) =>
      batches.submit(i),
    ),
  );

  expect(statement.calls).toEqual([[1], [2, 3], [4, 5], [6]]);
});

test('two items of one identity never share a statement', async () => {
  const statement = fakeStatement();
  const batches = new Batches({
    run: statement.run,
    groupOf: (item: Item) => item.group,
    identityOf: (item: Item) => item.id,
  });
  await Promise.all(items(1, [1, 2, 2, 3, 2]).map((i) => batches.submit(i)));

  expect(statement.calls).toEqual([[1], [2, 3], [2], [2]]);
});

test('a failed statement is tried again item by item: only the item it concerns fails', async () => {
  const statement = fakeStatement([3]);
  const batches = new Batches({ run: statement.run, groupOf: (item: Item) => item.group });
  const settled = await Promise.allSettled(items(1, [1, 2, 3, 4]).map((i) => batches.submit(i)));

  expect(settled.map((result) => result.status)).toEqual([
    'fulfilled',
    'fulfilled',
    'rejected',
    'fulfilled',
  ]);
  expect(statement.calls).toEqual([[1], [2, 3, 4], [2], [3], [4]]);
});

test('with room for several statements, each group still runs one at a time when so bounded', async () => {
  const statement = fakeStatement();
  let running = 0;
  const perGroup = new Map<number, number>();
  let mostPerGroup = 0;
  let mostRunning = 0;
  const run = async (batch: readonly Item[]) => {
    const group = batch[0]!.group;
    running += 1;
    perGroup.set(group, (perGroup.get(group) ?? 0) + 1);
    mostRunning = Math.max(mostRunning, running);
    mostPerGroup = Math.max(mostPerGroup, perGroup.get(group)!);
    try {
      return await statement.run(batch);
    } finally {
      running -= 1;
      perGroup.set(group, perGroup.get(group)! - 1);
    }
  };
  const batches = new Batches({
    run,
    groupOf: (item: Item) => item.group,
    maxInFlight: 3,
    maxInFlightPerGroup: 1,
  });
  await Promise.all(
    [...items(1, [1, 2]), ...items(2, [3, 4]), ...items(3, [5, 6]), ...items(4, [7])].map((i) =>
      batches.submit(i),
    ),
  );

  expect(mostRunning).toBe(3);
  expect(mostPerGroup).toBe(1);
  expect(statement.calls.flat().sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7]);
});
