import { sql, type DatabasePool } from 'slonik';
import { waitFor } from './wait.js';

/**
 * Holds the donor row FOR UPDATE in a transaction of the test's own, so that gifts for that
 * donor stay in flight inside the worker until `release` is called (which waits for the hold's
 * transaction to end).
 */
export const holdDonorRow = (db: DatabasePool, donorId: number) => holdRow(db, 'donors', donorId);

/**
 * Holds the row of `table` whose `column` (its id) is `id` FOR UPDATE, as holdDonorRow does;
 * writes that lock it wait.
 */
export async function holdRow(
  db: DatabasePool,
  table: string,
  id: number,
  column = 'id',
): Promise<{ release: () => Promise<void> }> {
  let release = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  let locked = () => {};
  const isLocked = new Promise<void>((resolve) => {
    locked = resolve;
  });
  const done = db.transaction(async (tx) => {
    await tx.query(
      sql.unsafe`SELECT FROM ${sql.identifier([table])} WHERE ${sql.identifier([column])} = ${id} FOR UPDATE`,
    );
    locked();
    await held;
  });
  await Promise.race([isLocked, done]);
  return {
    release: async () => {
      release();
      await done;
    },
  };
}

/**
 * Holds an uncommitted receipt under the Idempotency-Key `key` in a transaction of the test's
 * own: a write sent with that key runs all its checks and changes, then waits to store its
 * receipt, its locks held and nothing committed, until `release` rolls the hold back (the write
 * then commits as usual). Pauses a write at the last moment before its commit. With
 * `lockInstitution: false` the hold takes no lock on the institution's row.
 */
export async function holdReceiptKey(
  db: DatabasePool,
  institutionId: number,
  key: string,
  options: { lockInstitution?: boolean } = {},
): Promise<{ release: () => Promise<void> }> {
  let release = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  let inserted = () => {};
  const isInserted = new Promise<void>((resolve) => {
    inserted = resolve;
  });
  const done = db
    .transaction(async (tx) => {
      // The receipt's foreign key holds the institution FOR KEY SHARE, which a write that locks
      // the institution itself (PATCH /institution) would wait on; without it, only the key holds.
      if (options.lockInstitution === false)
        await tx.query(sql.unsafe`SET LOCAL session_replication_role = replica`);
      await tx.query(sql.unsafe`
        INSERT INTO write_receipts (institution_id, source, key, fingerprint, status_code,
                                    response_body, expires_at)
        VALUES (${institutionId}, 'client', ${key}, 'held by a test', 200, '{}',
                now() + interval '1 hour')`);
      inserted();
      await held;
      throw new RolledBack();
    })
    .catch((error: unknown) => {
      if (!(error instanceof RolledBack)) throw error;
    });
  await Promise.race([isInserted, done]);
  return {
    release: async () => {
      release();
      await done;
    },
  };
}

class RolledBack extends Error {}

/**
 * Two writes forced into one order: `first` is sent with the Idempotency-Key `key` and held just
 * before its commit (holdReceiptKey); once `waits` (the statements waiting on a lock) counts it,
 * `second` is sent, and once `waits` counts both, the first is released. `early` is 'answered'
 * when the second was answered while the first was held: it did not wait.
 */
export async function secondWaitsForFirst<First, Second>(
  db: DatabasePool,
  institutionId: number,
  writes: {
    key: string;
    first: (key: string) => Promise<First>;
    second: () => Promise<Second>;
    waits: () => Promise<unknown>;
  },
): Promise<{ early: 'answered' | undefined; first: First; second: Second }> {
  const hold = await holdReceiptKey(db, institutionId, writes.key);
  const first = writes.first(writes.key);
  await waitFor(async () => (await writes.waits()) === 1, 10_000, 'the first write held');
  const second = writes.second();
  const early = await Promise.race([
    second.then(() => 'answered' as const),
    waitFor(async () => (await writes.waits()) === 2, 10_000, 'the second write waiting').then(
      () => undefined,
    ),
  ]);
  await hold.release();
  const [one, two] = await Promise.all([first, second]);
  return { early, first: one, second: two };
}
