import { sql, type CommonQueryMethods, type FragmentSqlToken, type QuerySqlToken } from 'slonik';
import { z } from 'zod';
import type { JsonObject } from '../json.js';
import { encodeCursor } from './cursor.js';
import type { ListSpec } from './listSpec.js';
import type { ListContext, ListRequest } from './listRequest.js';

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

/** The order a page is read in: newest first, or oldest first when paging backward. */
const pageOrder = (backward: boolean) => (backward ? sql.fragment`ASC` : sql.fragment`DESC`);

const probeColumn = z.object({ other_side: z.boolean() });
const pageRowSchemas = new WeakMap<z.ZodType, z.ZodType>();

/**
 * The type of a page's rows: the list's row and the probe's column. Built once per list, not per
 * request (building a zod schema costs more than the rest of the page's work). Slonik does not
 * parse rows with it: the service's own rows are not validated again on every list.
 */
function pageRowSchema<Row>(row: z.ZodType<Row>): z.ZodType<Row & { other_side: boolean }> {
  let schema = pageRowSchemas.get(row);
  if (!schema) {
    schema = z.intersection(row, probeColumn);
    pageRowSchemas.set(row, schema);
  }
  return schema as z.ZodType<Row & { other_side: boolean }>;
}

/**
 * The statement of one keyset page: `limit + 1` rows (the extra one tells whether more lie
 * ahead) past the position, newest first forward (`key < position`) and oldest first backward
 * (`key > position`), each with whether a row lies on the other side of the position.
 */
export function pageStatement<Row>(
  spec: ListSpec<Row>,
  request: ListRequest,
  institutionId: number,
  ranges: RangeReading = DEFAULT_RANGE_READING,
): QuerySqlToken<z.ZodType<Row & { other_side: boolean }>> {
  const scope: FragmentSqlToken[] = [
    sql.fragment`${spec.institutionColumn} = ${institutionId}`,
    ...(spec.where ? [spec.where] : []),
  ];
  const filters = Object.entries(request.filters).map(([name, value]) =>
    spec.filters[name]!.condition(value),
  );
  const where = (extra: FragmentSqlToken | null) =>
    and(extra ? [...scope, ...filters, extra] : [...scope, ...filters]);
  const backward = request.direction === 'before';
  const position = request.position;
  const bound =
    position === null
      ? null
      : backward
        ? sql.fragment`${spec.key} > ${position}`
        : sql.fragment`${spec.key} < ${position}`;
  // Whether a row lies on the other side of the cursor (for the cursor back that way), read in
  // the same statement and snapshot as the page: an ordered one-row probe on the keyset index.
  const otherSide =
    position === null
      ? sql.fragment`false`
      : sql.fragment`(SELECT 1 FROM ${spec.from}
          WHERE ${where(backward ? sql.fragment`${spec.key} <= ${position}` : sql.fragment`${spec.key} >= ${position}`)}
          ORDER BY ${spec.key} ${backward ? sql.fragment`DESC` : sql.fragment`ASC`} LIMIT 1) IS NOT NULL`;
  const order = pageOrder(backward);
  const followsKey = Object.keys(request.filters).some((name) => spec.filters[name]!.followsKey);

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
    SELECT ${spec.columns}, ${otherSide} AS other_side FROM ${spec.from}
    WHERE ${where(bound)}
    ORDER BY ${spec.key} ${order}
    LIMIT ${request.limit + 1}`
  }`;
}

/**
 * One keyset page, newest first: `key < position` forward, `key > position` backward (read in
 * ascending order, then reversed). A cursor is returned in a direction only if a row lies there.
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

  const cursor = (row: Row | undefined, direction: 'after' | 'before') =>
    row === undefined
      ? null
      : encodeCursor(options.secret, {
          i: options.institutionId,
          e: spec.endpoint,
          f: request.filters,
          k: spec.keyOf(row),
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
