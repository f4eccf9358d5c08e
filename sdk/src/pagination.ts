import type { WithLastResponse } from './core.js';

/** The list envelope every list of the service answers with. */
export interface ListEnvelope<T = unknown> {
  has_more: boolean;
  next_cursor: string | null;
  previous_cursor: string | null;
  data: T[];
}

export type Row<P extends ListEnvelope> = P['data'][number];

export const MAX_TO_ARRAY = 10_000;

/**
 * What `list()` returns, as stripe-node's lists: a promise of the first page, and an async
 * iterable over every row of every page, following `next_cursor` as `starting_after`.
 */
export interface PagePromise<P extends ListEnvelope>
  extends Promise<WithLastResponse<P>>, AsyncIterable<Row<P>> {
  /** Every row, following the cursors, up to `max` (at most 10,000, the default). */
  toArray(options?: { max?: number }): Promise<Row<P>[]>;
}

export function pagePromise<P extends ListEnvelope>(
  first: Promise<WithLastResponse<P>>,
  after: (cursor: string) => Promise<WithLastResponse<P>>,
): PagePromise<P> {
  async function* rows(): AsyncGenerator<Row<P>> {
    let page: P = await first;
    for (;;) {
      yield* page.data as Row<P>[];
      // next_cursor is null when nothing follows the page, whichever way the first was asked.
      if (page.next_cursor === null) return;
      page = await after(page.next_cursor);
    }
  }
  const toArray = (options: { max?: number } = {}): Promise<Row<P>[]> => {
    const max = options.max ?? MAX_TO_ARRAY;
    if (!Number.isInteger(max) || max < 1 || max > MAX_TO_ARRAY)
      throw new RangeError(
        `toArray({ max }): max must be an integer from 1 to ${MAX_TO_ARRAY}; got ${String(max)}. Iterate with for await to read more.`,
      );
    return (async () => {
      const all: Row<P>[] = [];
      for await (const row of rows()) {
        all.push(row);
        if (all.length >= max) break;
      }
      return all;
    })();
  };
  return Object.assign(first, { [Symbol.asyncIterator]: rows, toArray });
}
