import type { CreatedOutcome, ReceiptedCreate } from '../common/idempotency/receipts.js';

/**
 * Commits creates as one statement, an outcome per create in order (insertWithReceipts with
 * its pool); throws, having written nothing, when any is refused.
 */
export type InsertCreates = (
  items: readonly ReceiptedCreate[],
) => Promise<(CreatedOutcome | null)[]>;

interface Pending {
  item: ReceiptedCreate;
  resolve(outcome: CreatedOutcome | null): void;
  reject(error: unknown): void;
}

/** Receipts in one order in every batch, so that two batches never wait on each other's keys. */
const byReceipt = (a: Pending, b: Pending) => {
  const [x, y] = [a.item.receipt, b.item.receipt];
  if (x.source !== y.source) return x.source < y.source ? -1 : 1;
  return x.key < y.key ? -1 : x.key > y.key ? 1 : 0;
};

const institutionOf = (pending: Pending) => pending.item.receipt.institutionId;

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
 * docs/scaling.md) a batch is then a transaction on one shard, never one across shards.
 */
export class GroupCommit {
  private readonly waiting: Pending[] = [];
  private inFlight = 0;

  constructor(
    private readonly insert: InsertCreates,
    /** Told the number of creates of each statement sent (a metric). */
    private readonly onStatement: (creates: number) => void = () => {},
    private readonly maxInFlight = 1,
    private readonly maxBatch = 32,
  ) {}

  commit(item: ReceiptedCreate): Promise<CreatedOutcome | null> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      this.next();
    });
  }

  private next(): void {
    while (this.inFlight < this.maxInFlight && this.waiting.length) {
      const batch = this.takeBatch();
      this.inFlight += 1;
      void this.run(batch).finally(() => {
        this.inFlight -= 1;
        this.next();
      });
    }
  }

  /** The oldest waiting create and its institution's next ones, in arrival order otherwise. */
  private takeBatch(): Pending[] {
    const institutionId = institutionOf(this.waiting[0]!);
    const batch: Pending[] = [];
    const rest: Pending[] = [];
    for (const pending of this.waiting) {
      if (batch.length < this.maxBatch && institutionOf(pending) === institutionId)
        batch.push(pending);
      else rest.push(pending);
    }
    this.waiting.splice(0, this.waiting.length, ...rest);
    return batch.sort(byReceipt);
  }

  private async run(batch: Pending[]): Promise<void> {
    if (batch.length === 1) return this.alone(batch[0]!);
    let outcomes: (CreatedOutcome | null)[];
    this.onStatement(batch.length);
    try {
      outcomes = await this.insert(batch.map((pending) => pending.item));
    } catch {
      await Promise.all(batch.map((pending) => this.alone(pending)));
      return;
    }
    batch.forEach((pending, index) => pending.resolve(outcomes[index] ?? null));
  }

  private alone(pending: Pending): Promise<void> {
    this.onStatement(1);
    return this.insert([pending.item]).then(
      ([outcome]) => pending.resolve(outcome ?? null),
      pending.reject,
    );
  }
}
