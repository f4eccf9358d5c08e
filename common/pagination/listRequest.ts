import { errors } from '../errors.js';
import { decodeCursor, type CursorPayload, type Direction } from './cursor.js';
import type { ListSpec, SortType, SortValue } from './listSpec.js';

export const DEFAULT_LIMIT = 25;
export const MAX_LIMIT = 100;

/** The row a page starts after or ends before: its key, and its sort value on a sorted list. */
export interface KeysetPosition {
  key: number;
  /** The sort value's text form (ListSpec.sort); absent on a list ordered by the key alone. */
  value?: string;
}

export interface ListRequest {
  limit: number;
  direction: Direction;
  /** The keyset position to page from; null on a first request. */
  position: KeysetPosition | null;
  filters: Record<string, string>;
}

export interface ListContext {
  institutionId: number;
  secret: string;
  nowSeconds: number;
}

type QueryValue = unknown;

function single(param: string, value: QueryValue): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string')
    throw errors.invalidParameter(param, `${param} must be sent once, as a plain value.`);
  return value;
}

/**
 * interface.md §4: out-of-range integers are coerced into 1..100, however many digits they have
 * (Number reads a very long one as ±Infinity, which the range takes in too); anything else is an
 * error.
 */
function parseLimit(raw: string | undefined): number {
  if (raw === undefined) return DEFAULT_LIMIT;
  if (!/^[+-]?\d+$/.test(raw.trim()))
    throw errors.invalidParameter('limit', 'limit must be an integer.');
  return Math.min(MAX_LIMIT, Math.max(1, Number(raw.trim())));
}

/**
 * Reads a list request: limit, cursor (starting_after wins over ending_before) and filters.
 * Filters come on the first request; afterwards the cursor carries them, and a filter repeated
 * next to a cursor must equal the pinned value.
 */
export function parseListRequest<Row>(
  spec: ListSpec<Row>,
  query: Record<string, QueryValue>,
  ctx: ListContext,
): ListRequest {
  for (const name of Object.keys(query)) {
    if (
      !['limit', 'starting_after', 'ending_before'].includes(name) &&
      !Object.hasOwn(spec.filters, name)
    ) {
      throw errors.invalidParameter(
        name,
        `${name} is not a recognised query parameter for this list.`,
      );
    }
  }
  const limit = parseLimit(single('limit', query.limit));
  const sent: Record<string, string> = {};
  for (const [name, filter] of Object.entries(spec.filters)) {
    const raw = single(name, query[name]);
    if (raw !== undefined) sent[name] = filter.parse(name, raw);
  }

  const after = single('starting_after', query.starting_after);
  const before = after === undefined ? single('ending_before', query.ending_before) : undefined;
  const param = after !== undefined ? 'starting_after' : 'ending_before';
  const token = after ?? before;
  if (token === undefined) {
    for (const name of spec.required ?? [])
      if (sent[name] === undefined) throw errors.parameterMissing(name);
    for (const [name, needed] of Object.entries(spec.needs ?? {}))
      if (sent[name] !== undefined && sent[needed] === undefined)
        throw errors.parameterMissing(needed);
    return { limit, direction: 'after', position: null, filters: sent };
  }

  const cursor: CursorPayload | null = decodeCursor(ctx.secret, token, ctx.nowSeconds);
  const expected: Direction = after !== undefined ? 'after' : 'before';
  if (
    !cursor ||
    cursor.i !== ctx.institutionId ||
    cursor.e !== spec.endpoint ||
    cursor.d !== expected
  ) {
    throw errors.invalidCursor(param);
  }
  for (const [name, value] of Object.entries(sent)) {
    if (cursor.f[name] !== value) throw errors.invalidCursor(param);
  }
  for (const name of Object.keys(cursor.f)) {
    if (!Object.hasOwn(spec.filters, name)) throw errors.invalidCursor(param);
  }
  if (!positionFits(spec.sort, cursor.v)) throw errors.invalidCursor(param);
  const position: KeysetPosition =
    cursor.v === undefined ? { key: cursor.k } : { key: cursor.k, value: cursor.v };
  return { limit, direction: cursor.d, position, filters: cursor.f };
}

/**
 * How Postgres writes each sort type as text (the form a cursor carries). Cursors are signed, so
 * this guards only against a list whose order changed under cursors already given out: a value
 * the cast back would refuse is a cursor of another list, not a 500.
 */
const SORT_TEXT: Record<SortType, (value: string) => boolean> = {
  timestamptz: (value) =>
    /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d{1,6})?[+-]\d{2}(:\d{2}){0,2}$/.test(value),
  numeric: (value) => /^-?\d{1,1000}(\.\d{1,1000})?$/.test(value),
  // Any text casts back to text.
  text: () => true,
};

/** A cursor carries a sort value exactly when its list is ordered by one, of that list's type. */
function positionFits(sort: SortValue | undefined, value: string | undefined): boolean {
  if (sort === undefined || value === undefined) return sort === value;
  return SORT_TEXT[sort.type](value);
}
