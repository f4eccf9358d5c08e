import { errors } from '../errors.js';
import { decodeCursor, type CursorPayload, type Direction } from './cursor.js';
import type { ListSpec } from './listSpec.js';

export const DEFAULT_LIMIT = 25;
export const MAX_LIMIT = 100;

export interface ListRequest {
  limit: number;
  direction: Direction;
  /** The keyset position to page from; null on a first request. */
  position: number | null;
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
  return { limit, direction: cursor.d, position: cursor.k, filters: cursor.f };
}
