import type { CreatedOutcome, ReceiptedCreate } from '../common/idempotency/receipts.js';
import { Batches } from './batches.js';

/**
 * Commits creates as one statement, an outcome per create in order (insertWithReceipts with
 * its pool); throws, having written nothing, when any is refused.
 */
export type InsertCreates = (
  items: readonly ReceiptedCreate[],
) => Promise<(CreatedOutcome | null)[]>;

/** Receipts in one order in every batch, so that two batches never wait on each other's keys. */
const byReceipt = (a: ReceiptedCreate, b: ReceiptedCreate) => {
  const [x, y] = [a.receipt, b.receipt];
  if (x.source !== y.source) return x.source < y.source ? -1 : 1;
  return x.key < y.key ? -1 : x.key > y.key ? 1 : 0;
};

/**
 * Group commit for the worker's single-statement creates (runWrite): the creates of jobs that
 * run at the same time go to Postgres as one statement, sharing its round trip, its transaction
 * and its commit, which is most of what a create costs Postgres. Nothing waits to fill a batch:
 * a create goes out at once while fewer than `maxInFlight` statements are running, else with the
 * next batch. One at a time (the default) makes the batches largest, which cost the least CPU
 * per create in `npm run bench:writes`. When a batch fails, each of its creates is tried alone,
 * so a refusal (a donor that is gone, a key already used) or any other failure reaches only the
 * create it concerns.
 *
 * A batch holds one institution's creates only: the oldest waiting create's institution goes
 * next, with up to `maxBatch` of its creates. On PostgreSQL distributed by institution (Citus,
 * docs/scaling.md) a batch is then a transaction on one shard, never one across shards. So that
 * many institutions writing at once do not wait in line for one another's statements, up to
 * `institutionsAtOnce` institutions have a statement running side by side, each one at a time
 * (`maxInFlight`), which keeps one institution's batches as large as before.
 */
export class GroupCommit {
  private readonly batches: Batches<ReceiptedCreate, CreatedOutcome | null>;

  constructor(
    insert: InsertCreates,
    /** Told the number of creates of each statement sent (a metric). */
    onStatement: (creates: number) => void = () => {},
    /** Statements of one institution running at once. */
    maxInFlight = 1,
    maxBatch = 32,
    /** Institutions whose statements run side by side. */
    institutionsAtOnce = 4,
  ) {
    this.batches = new Batches({
      run: async (items) => {
        onStatement(items.length);
        const outcomes = await insert(items);
        return items.map((_, index) => outcomes[index] ?? null);
      },
      groupOf: (item) => item.receipt.institutionId,
      order: byReceipt,
      maxBatch,
      maxInFlightPerGroup: maxInFlight,
      maxInFlight: maxInFlight * institutionsAtOnce,
    });
  }

  commit(item: ReceiptedCreate): Promise<CreatedOutcome | null> {
    return this.batches.submit(item);
  }
}
