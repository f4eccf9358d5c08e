import { sql, type CommonQueryMethods, type FragmentSqlToken, type QuerySqlToken } from 'slonik';
import { z } from 'zod';
import type { JsonObject } from '../json.js';
import { encodeCursor } from './cursor.js';
import type { ListSpec } from './listSpec.js';
import type { ListContext, ListRequest } from './listRequest.js';

export interface PageOptions extends ListContext {
  ttlSeconds: number;
}

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
): QuerySqlToken<z.ZodType<Row & { other_side: boolean }>> {
  const scope: FragmentSqlToken[] = [
    sql.fragment`${spec.institutionColumn} = ${institutionId}`,
    ...(spec.where ? [spec.where] : []),
  ];
  const filters = Object.entries(request.filters).map(([name, value]) =>
    spec.filters[name]!.condition(value),
  );
  const and = (conditions: FragmentSqlToken[]) => sql.join(conditions, sql.fragment` AND `);
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
  const order = backward ? sql.fragment`ASC` : sql.fragment`DESC`;
  const followsKey = Object.keys(request.filters).some((name) => spec.filters[name]!.followsKey);

  return sql.type(pageRowSchema(spec.row))`${
    followsKey
      ? windowedPage(spec, { scope, filters, bound, backward, limit: request.limit, otherSide })
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
  const rows = await db.any(pageStatement(spec, request, options.institutionId));
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

/** The rows read ahead on the key, per row of the page, before a range's own index is used. */
const WINDOW_ROWS_PER_PAGE_ROW = 10;

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
 * statement, read without walking the key through every row newer than the range. The planner
 * expects a range's rows spread evenly over the key and walks it until the page is full, which
 * for a range far in the past reads most of the table. Here the next rows on the key (a window of
 * WINDOW_ROWS_PER_PAGE_ROW per row of the page) are read first: when they hold a full page it is
 * exact, since every match beyond them lies further on the key. Otherwise the rest of the page is
 * the first on the key of the matches beyond the window, sorted after reading them from the
 * filter's own index, so the cost is the range's size rather than its distance from the newest
 * rows. Gated by one-time conditions, that part is not run at all when the window sufficed.
 */
function windowedPage<Row>(spec: ListSpec<Row>, parts: WindowedParts): FragmentSqlToken {
  const { scope, filters, bound, backward, limit, otherSide } = parts;
  const and = (conditions: FragmentSqlToken[]) => sql.join(conditions, sql.fragment` AND `);
  const order = backward ? sql.fragment`ASC` : sql.fragment`DESC`;
  const size = WINDOW_ROWS_PER_PAGE_ROW * (limit + 1);
  const beyondWindow = backward
    ? sql.fragment`${spec.key} > (SELECT max(page_key) FROM page_window)`
    : sql.fragment`${spec.key} < (SELECT min(page_key) FROM page_window)`;
  // `key + 0` hides the key's order from the planner, so that it reads the matches from the
  // filter's index and sorts them instead of walking the key again.
  return sql.fragment`
    WITH page_window AS MATERIALIZED (
      SELECT ${spec.columns}, ${spec.key} AS page_key, (${and(filters)}) AS page_hit
      FROM ${spec.from} WHERE ${and(bound ? [...scope, bound] : scope)}
      ORDER BY ${spec.key} ${order} LIMIT ${size})
    SELECT page.*, ${otherSide} AS other_side FROM (
      SELECT * FROM page_window WHERE page_hit
      UNION ALL
      SELECT ${spec.columns}, ${spec.key}, true FROM ${spec.from}
      WHERE ${and(scope)}
        AND (SELECT count(*) FROM page_window) = ${size}
        AND (SELECT count(*) FROM page_window WHERE page_hit) <= ${limit}
        AND ${spec.key} IN (
          SELECT ${spec.key} FROM ${spec.from} WHERE ${and([...scope, ...filters, beyondWindow])}
          ORDER BY ${spec.key} + 0 ${order} LIMIT ${limit + 1})
    ) page
    ORDER BY page.page_key ${order}
    LIMIT ${limit + 1}`;
}
