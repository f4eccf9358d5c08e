import { sql, type DatabasePool } from 'slonik';

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
