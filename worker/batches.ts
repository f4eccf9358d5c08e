interface Pending<Item, Result> {
  item: Item;
  resolve(result: Result): void;
  reject(error: unknown): void;
}

export interface BatchOptions<Item, Result> {
  /** Runs a batch as one statement: a result per item, in order. */
  run(items: readonly Item[]): Promise<Result[]>;
  /** A batch holds one group's items only (an institution: one shard of a distributed database). */
  groupOf(item: Item): number;
  /** Items with the same identity never share a batch (two attempts of one delivery). */
  identityOf?(item: Item): number;
  /** The order of a batch's items in its statement (e.g. so two batches never wait on each other). */
  order?(a: Item, b: Item): number;
  maxBatch?: number;
  /** Statements running at once, over every group. */
  maxInFlight?: number;
  /** Statements of one group running at once (unbounded but by maxInFlight when unset). */
  maxInFlightPerGroup?: number;
}

/**
 * Items submitted at the same time go to Postgres together, sharing one statement, its round
 * trip and its commit, which is most of what a small statement costs (the worker's group commit
 * of creates and the webhook deliveries' reads and attempts). Nothing waits to fill a batch: an
 * item goes out at once while fewer than `maxInFlight` statements run, else with the next batch.
 * When a batch fails, each of its items is run alone, so a failure reaches only the item it
 * concerns.
 */
export class Batches<Item, Result> {
  private readonly waiting: Pending<Item, Result>[] = [];
  private inFlight = 0;
  /** Statements running per group. */
  private readonly running = new Map<number, number>();
  private readonly maxBatch: number;
  private readonly maxInFlight: number;
  private readonly maxInFlightPerGroup: number;

  constructor(private readonly options: BatchOptions<Item, Result>) {
    this.maxBatch = options.maxBatch ?? 50;
    this.maxInFlight = options.maxInFlight ?? 1;
    this.maxInFlightPerGroup = options.maxInFlightPerGroup ?? this.maxInFlight;
  }

  submit(item: Item): Promise<Result> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      this.next();
    });
  }

  private next(): void {
    while (this.inFlight < this.maxInFlight) {
      const batch = this.takeBatch();
      if (!batch) return;
      const group = this.options.groupOf(batch[0]!.item);
      this.inFlight += 1;
      this.running.set(group, (this.running.get(group) ?? 0) + 1);
      void this.run(batch).finally(() => {
        this.inFlight -= 1;
        const left = this.running.get(group)! - 1;
        if (left) this.running.set(group, left);
        else this.running.delete(group);
        this.next();
      });
    }
  }

  /**
   * The oldest waiting item of a group with room for another statement, and its group's next
   * ones, in arrival order otherwise; null when every waiting item's group is at its limit.
   */
  private takeBatch(): Pending<Item, Result>[] | null {
    const { groupOf, identityOf } = this.options;
    const first = this.waiting.find(
      (pending) => (this.running.get(groupOf(pending.item)) ?? 0) < this.maxInFlightPerGroup,
    );
    if (!first) return null;
    const group = groupOf(first.item);
    const batch: Pending<Item, Result>[] = [];
    const rest: Pending<Item, Result>[] = [];
    const identities = new Set<number>();
    for (const pending of this.waiting) {
      const identity = identityOf?.(pending.item);
      if (
        batch.length < this.maxBatch &&
        groupOf(pending.item) === group &&
        (identity === undefined || !identities.has(identity))
      ) {
        batch.push(pending);
        if (identity !== undefined) identities.add(identity);
      } else rest.push(pending);
    }
    this.waiting.splice(0, this.waiting.length, ...rest);
    const { order } = this.options;
    return order ? batch.sort((a, b) => order(a.item, b.item)) : batch;
  }

  private async run(batch: Pending<Item, Result>[]): Promise<void> {
    if (batch.length === 1) return this.alone(batch[0]!);
    let results: Result[];
    try {
      results = await this.options.run(batch.map((pending) => pending.item));
    } catch {
      await Promise.all(batch.map((pending) => this.alone(pending)));
      return;
    }
    batch.forEach((pending, index) => pending.resolve(results[index]!));
  }

  private alone(pending: Pending<Item, Result>): Promise<void> {
    return this.options
      .run([pending.item])
      .then(([result]) => pending.resolve(result!), pending.reject);
  }
}
