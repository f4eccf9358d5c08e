import { sql, type CommonQueryMethods, type FragmentSqlToken, type QuerySqlToken } from 'slonik';
import { z } from 'zod';
import type { JsonObject } from '../json.js';
import { encodeCursor } from './cursor.js';
import type { ListSpec, SortType } from './listSpec.js';
import type { KeysetPosition, ListContext, ListRequest } from './listRequest.js';

/**
 * How the page of a filter whose values rise with the key (a date range) is read
 * (windowedPage): the key is walked over at most `walkRows` rows past the position; beyond them
 * a range of fewer than `sortRows` rows is read from its index and sorted, a larger one walked.
 */
export interface RangeReading {
  walkRows: number;
  sortRows: number;
}

export const DEFAULT_RANGE_READING: RangeReading = { walkRows: 1_000, sortRows: 20_000 };

export interface PageOptions extends ListContext {
  ttlSeconds: number;
  ranges: RangeReading;
}

const and = (conditions: FragmentSqlToken[]) => sql.join(conditions, sql.fragment` AND `);

const orderWord = (descending: boolean) => (descending ? sql.fragment`DESC` : sql.fragment`ASC`);

/** The order a page is read in: newest first, or oldest first when paging backward. */
const pageOrder = (backward: boolean) => orderWord(!backward);

const SORT_CASTS: Record<SortType, (text: string) => FragmentSqlToken> = {
  timestamptz: (text) => sql.fragment`${text}::timestamptz`,
  numeric: (text) => sql.fragment`${text}::numeric`,
  text: (text) => sql.fragment`${text}::text`,
};

/**
 * The keyset of a list: the key alone, or (sort value, key). One shape for both, so that a list
 * without a sort value gets the statement it always had (`id < 7`, `ORDER BY id DESC`).
 */
interface Keyset {
  /** What is compared with a position: `id`, or the row `(captured_at, id)`. */
  tuple: FragmentSqlToken;
  /** Whether the list's own order (forward) is descending. */
  descending: boolean;
  /** ORDER BY items, every column descending or every one ascending. */
  orderBy(descending: boolean): FragmentSqlToken;
  /** A position as the tuple's equal: `7`, or `('2026-…'::timestamptz, 7)`. */
  at(position: KeysetPosition): FragmentSqlToken;
}

function keysetOf(spec: Pick<ListSpec<unknown>, 'key' | 'sort'>): Keyset {
  const { key, sort } = spec;
  if (!sort)
    return {
      tuple: key,
      descending: true,
      orderBy: (descending) => sql.fragment`${key} ${orderWord(descending)}`,
      at: (position) => sql.fragment`${position.key}`,
    };
  const cast = SORT_CASTS[sort.type];
  return {
    tuple: sql.fragment`(${sort.column}, ${key})`,
    descending: sort.direction === 'desc',
    orderBy(descending) {
      const order = orderWord(descending);
      return sql.fragment`${sort.column} ${order}, ${key} ${order}`;
    },
    // A position's value always comes from a cursor this list gave, with its sort value.
    at: (position) => sql.fragment`(${cast(position.value ?? '')}, ${position.key})`,
  };
}

/** `tuple < position` when read descending, `tuple > position` when ascending. */
const past = (keyset: Keyset, descending: boolean, position: KeysetPosition) =>
  descending
    ? sql.fragment`${keyset.tuple} < ${keyset.at(position)}`
    : sql.fragment`${keyset.tuple} > ${keyset.at(position)}`;

/** The position and the rows before it in the order read: `>=` descending, `<=` ascending. */
const notPast = (keyset: Keyset, descending: boolean, position: KeysetPosition) =>
  descending
    ? sql.fragment`${keyset.tuple} >= ${keyset.at(position)}`
    : sql.fragment`${keyset.tuple} <= ${keyset.at(position)}`;

const probeColumns = z.object({ other_side: z.boolean(), page_sort_value: z.string().optional() });
const pageRowSchemas = new WeakMap<z.ZodType, z.ZodType>();

type PageRow<Row> = Row & z.infer<typeof probeColumns>;

/**
 * The type of a page's rows: the list's row, the probe's column and, on a sorted list, the sort
 * value as text (for the cursor). Built once per list, not per request (building a zod schema
 * costs more than the rest of the page's work). Slonik does not parse rows with it: the
 * service's own rows are not validated again on every list.
 */
function pageRowSchema<Row>(row: z.ZodType<Row>): z.ZodType<PageRow<Row>> {
  let schema = pageRowSchemas.get(row);
  if (!schema) {
    schema = z.intersection(row, probeColumns);
    pageRowSchemas.set(row, schema);
  }
  return schema as z.ZodType<PageRow<Row>>;
}

/**
 * The statement of one keyset page: `limit + 1` rows (the extra one tells whether more lie
 * ahead) past the position, in the list's order forward (`key < position`, newest first) and in
 * the reverse backward (`key > position`), each with whether a row lies on the other side of
 * the position. A sorted list compares (value, key) rows instead of the key.
 */
export function pageStatement<Row>(
  list: ListSpec<Row>,
  request: ListRequest,
  institutionId: number,
  ranges: RangeReading = DEFAULT_RANGE_READING,
): QuerySqlToken<z.ZodType<PageRow<Row>>> {
  const spec = list.source ? { ...list, from: list.source(request.filters, institutionId) } : list;
  const scope: FragmentSqlToken[] = [
    sql.fragment`${spec.institutionColumn} = ${institutionId}`,
    ...(spec.where ? [spec.where] : []),
    ...(spec.byDefault && !Object.hasOwn(request.filters, spec.byDefault.unless)
      ? [spec.byDefault.condition]
      : []),
  ];
  const filters = Object.entries(request.filters)
    .filter(([name]) => !spec.filters[name]!.shapesSource)
    .map(([name, value]) => spec.filters[name]!.condition(value));
  const where = (extra: FragmentSqlToken | null) =>
    and(extra ? [...scope, ...filters, extra] : [...scope, ...filters]);
  const keyset = keysetOf(spec);
  const backward = request.direction === 'before';
  // Backward, the page is read against the list's order and reversed afterwards.
  const descending = keyset.descending !== backward;
  const position = request.position;
  const bound = position === null ? null : past(keyset, descending, position);
  // Whether a row lies on the other side of the cursor (for the cursor back that way), read in
  // the same statement and snapshot as the page: an ordered one-row probe on the keyset index.
  const otherSide =
    position === null
      ? sql.fragment`false`
      : sql.fragment`(SELECT 1 FROM ${spec.from}
          WHERE ${where(notPast(keyset, descending, position))}
          ORDER BY ${keyset.orderBy(!descending)} LIMIT 1) IS NOT NULL`;
  const extras = spec.sort
    ? sql.fragment`${otherSide} AS other_side, ${spec.sort.column}::text AS page_sort_value`
    : sql.fragment`${otherSide} AS other_side`;
  // A sorted list's values need not rise with its key, which the windowed reading relies on.
  const followsKey =
    !spec.sort && Object.keys(request.filters).some((name) => spec.filters[name]!.followsKey);

  return sql.type(pageRowSchema(spec.row))`${
    followsKey
      ? windowedPage(spec, ranges, {
          scope,
          filters,
          bound,
          backward,
          limit: request.limit,
          otherSide,
        })
      : sql.fragment`
    SELECT ${spec.columns}, ${extras} FROM ${spec.from}
    WHERE ${where(bound)}
    ORDER BY ${keyset.orderBy(descending)}
    LIMIT ${request.limit + 1}`
  }`;
}

/**
 * One keyset page in the list's order (newest first, or by its sort value): past the position
 * forward, before it backward (read in the reverse order, then reversed). A cursor is returned
 * in a direction only if a row lies there.
 */
export async function listPage<Row>(
  db: CommonQueryMethods,
  spec: ListSpec<Row>,
  request: ListRequest,
  options: PageOptions,
): Promise<JsonObject> {
  const rows = await db.any(pageStatement(spec, request, options.institutionId, options.ranges));
  const backward = request.direction === 'before';
  const hasMore = rows.length > request.limit;
  const page = rows.slice(0, request.limit);
  if (backward) page.reverse();
  const behind = rows[0]?.other_side ?? false;

  const cursor = (row: PageRow<Row> | undefined, direction: 'after' | 'before') =>
    row === undefined
      ? null
      : encodeCursor(options.secret, {
          i: options.institutionId,
          e: spec.endpoint,
          f: request.filters,
          k: spec.keyOf(row),
          ...(row.page_sort_value === undefined ? {} : { v: row.page_sort_value }),
          d: direction,
          x: options.nowSeconds + options.ttlSeconds,
        });
  // Travelling one way, more lies ahead exactly when the page overflowed; behind, when the probe
  // found a row. An empty page has neither cursor.
  const olderRowsExist = backward ? behind : hasMore;
  const newerRowsExist = backward ? hasMore : behind;
  const next = olderRowsExist ? cursor(page.at(-1), 'after') : null;
  const previous = newerRowsExist ? cursor(page[0], 'before') : null;

  return {
    object: 'list',
    url: spec.endpoint,
    has_more: hasMore,
    next_cursor: next,
    previous_cursor: previous,
    data: page.map((row) => spec.present(row)),
  };
}

interface WindowedParts {
  scope: FragmentSqlToken[];
  filters: FragmentSqlToken[];
  bound: FragmentSqlToken | null;
  backward: boolean;
  limit: number;
  otherSide: FragmentSqlToken;
}

/**
 * The page of a filter whose values rise with the key (a date range): the same rows as the plain
 * statement, without reading every row between the position and a range far from it. The planner
 * expects a range's rows spread evenly over the key and walks the key until the page is full;
 * for a range years back that reads most of the table. Here:
 *
 * 1. the key is walked as before, but over at most `walkRows` rows past the position: a range
 *    that starts near the position (the newest rows, or a page after the first) is answered so;
 * 2. otherwise, beyond those rows, a range of fewer than `sortRows` rows (counted on its index,
 *    up to that many) is read from its index and sorted, so it costs its own size;
 * 3. and a larger range is walked on the key from there, as the plain statement does, since its
 *    size would cost more than the walk to it.
 *
 * One-time conditions gate the second and third parts, so that only one of them runs, and only
 * when the first did not fill the page.
 */
function windowedPage<Row>(
  spec: ListSpec<Row>,
  { walkRows, sortRows }: RangeReading,
  parts: WindowedParts,
): FragmentSqlToken {
  const { scope, filters, bound, backward, limit, otherSide } = parts;
  const order = pageOrder(backward);
  const ahead = and(bound ? [...scope, bound] : scope);
  const beyondWalk = backward
    ? sql.fragment`${spec.key} > (SELECT edge FROM page_edge)`
    : sql.fragment`${spec.key} < (SELECT edge FROM page_edge)`;
  const range = and([...scope, ...filters, beyondWalk]);
  const walkFell = sql.fragment`(SELECT count(*) FROM page_walk) <= ${limit}`;
  // In the second part, `key + 0` hides the key's order from the planner, so that it reads the
  // range from the range's index and sorts it rather than walking the key again.
  return sql.fragment`
    WITH page_walk AS MATERIALIZED (
      SELECT ${spec.key} AS page_key
      FROM (SELECT * FROM ${spec.from} WHERE ${ahead}
            ORDER BY ${spec.key} ${order} LIMIT ${walkRows}) AS ${spec.from}
      WHERE ${and(filters)}
      ORDER BY ${spec.key} ${order} LIMIT ${limit + 1}),
    page_edge AS MATERIALIZED (
      SELECT ${spec.key} AS edge FROM ${spec.from} WHERE ${ahead}
      ORDER BY ${spec.key} ${order} OFFSET ${walkRows - 1} LIMIT 1),
    page_small AS MATERIALIZED (
      SELECT count(*) < ${sortRows} AS small
      FROM (SELECT 1 FROM ${spec.from} WHERE ${range} LIMIT ${sortRows}) AS counted),
    page_keys AS MATERIALIZED (
      SELECT page_key FROM page_walk
      UNION ALL
      SELECT page_key FROM (
        SELECT ${spec.key} AS page_key FROM ${spec.from} WHERE ${range}
        ORDER BY ${spec.key} + 0 ${order} LIMIT ${limit + 1}) AS sorted
      WHERE ${walkFell} AND (SELECT small FROM page_small)
      UNION ALL
      SELECT page_key FROM (
        SELECT ${spec.key} AS page_key FROM ${spec.from} WHERE ${range}
        ORDER BY ${spec.key} ${order} LIMIT ${limit + 1}) AS walked
      WHERE ${walkFell} AND NOT (SELECT small FROM page_small))
    SELECT ${spec.columns}, ${otherSide} AS other_side FROM ${spec.from}
    WHERE ${and(scope)} AND ${spec.key} = ANY (ARRAY(SELECT page_key FROM page_keys))
    ORDER BY ${spec.key} ${order}
    LIMIT ${limit + 1}`;
}
