import { sql, type CommonQueryMethods, type FragmentSqlToken } from 'slonik';
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
 * One keyset page, newest first: `key < position` forward, `key > position` backward (read in
 * ascending order, then reversed). A cursor is returned in a direction only if a row lies there.
 */
export async function listPage<Row>(
  db: CommonQueryMethods,
  spec: ListSpec<Row>,
  request: ListRequest,
  options: PageOptions,
): Promise<JsonObject> {
  const base: FragmentSqlToken[] = [
    sql.fragment`${spec.institutionColumn} = ${options.institutionId}`,
    ...(spec.where ? [spec.where] : []),
    ...Object.entries(request.filters).map(([name, value]) => spec.filters[name]!.condition(value)),
  ];
  const where = (extra: FragmentSqlToken | null) =>
    sql.join(extra ? [...base, extra] : base, sql.fragment` AND `);
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

  const rows = await db.any(sql.type(pageRowSchema(spec.row))`
    SELECT ${spec.columns}, ${otherSide} AS other_side FROM ${spec.from}
    WHERE ${where(bound)}
    ORDER BY ${spec.key} ${backward ? sql.fragment`ASC` : sql.fragment`DESC`}
    LIMIT ${request.limit + 1}`);
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
