import { sql, type CommonQueryMethods, type FragmentSqlToken, type ValueExpression } from 'slonik';
import type { z } from 'zod';
import type { JsonObject } from '../json.js';
import type { ListSpec } from '../pagination/listSpec.js';

/** Reads one record of the caller's institution, presented; null when it is not theirs or not there. */
export type Retrieval = (
  db: CommonQueryMethods,
  institutionId: number,
  id: number,
) => Promise<JsonObject | null>;

/** What every stored record has. */
export interface Stored {
  id: number;
  created_at: string;
  updated_at: string;
}

/**
 * A resource's table, stated once: its name, its row (whose keys are the columns read), and
 * where a column is not read or written as a plain value, how it is. Every statement built here
 * names the institution.
 */
export interface Table<Row extends Stored, Fields extends object> {
  name: string;
  row: z.ZodObject & z.ZodType<Row>;
  /** Columns read through an expression, e.g. dates as text (node-postgres would make a Date). */
  readAs?: Partial<Record<keyof Row & string, FragmentSqlToken>>;
  /** Fields written through an expression, e.g. jsonb or a cast. */
  writeAs?: { [K in keyof Fields]?: (value: Fields[K]) => ValueExpression };
}

/** Statement parts built once per table: every write of a resource would otherwise rebuild them. */
const selectLists = new WeakMap<object, FragmentSqlToken>();
const insertLists = new WeakMap<object, Map<string, FragmentSqlToken>>();

/** The SELECT list of a table's row (also a RETURNING list). */
export function columnsOf<Row extends Stored>(table: Table<Row, object>): FragmentSqlToken {
  const cached = selectLists.get(table);
  if (cached) return cached;
  const list = buildColumns(table);
  selectLists.set(table, list);
  return list;
}

/** `institution_id, <the fields' columns>`, for fields in the order given. */
function insertColumns(table: object, names: readonly string[]): FragmentSqlToken {
  let byNames = insertLists.get(table);
  if (!byNames) insertLists.set(table, (byNames = new Map()));
  const key = names.join(',');
  let list = byNames.get(key);
  if (!list) {
    const columns = [
      sql.fragment`institution_id`,
      ...names.map((name) => sql.fragment`${sql.identifier([name])}`),
    ];
    list = sql.fragment`${sql.join(columns, sql.fragment`, `)}`;
    byNames.set(key, list);
  }
  return list;
}

function buildColumns<Row extends Stored>(table: Table<Row, object>): FragmentSqlToken {
  const readAs: Partial<Record<string, FragmentSqlToken>> = table.readAs ?? {};
  const columns = Object.keys(table.row.shape).map((name) => {
    const expression = readAs[name];
    return expression
      ? sql.fragment`${expression} AS ${sql.identifier([name])}`
      : sql.fragment`${sql.identifier([name])}`;
  });
  return sql.fragment`${sql.join(columns, sql.fragment`, `)}`;
}

/** Each field as it is written: its own expression, or the plain value. */
function valuesOf<Fields extends object>(
  table: Table<Stored, Fields>,
  fields: Fields,
): [string, ValueExpression][] {
  const writeAs = (table.writeAs ?? {}) as Record<string, (value: unknown) => ValueExpression>;
  return Object.entries(fields).map(([name, value]) => [
    name,
    writeAs[name] ? writeAs[name](value) : (value as ValueExpression),
  ]);
}

export function findRow<Row extends Stored>(
  db: CommonQueryMethods,
  table: Table<Row, object>,
  institutionId: number,
  id: number,
  lock: FragmentSqlToken = sql.fragment``,
): Promise<Row | null> {
  return db.maybeOne(sql.type(table.row)`
    SELECT ${columnsOf(table)} FROM ${sql.identifier([table.name])}
    WHERE institution_id = ${institutionId} AND id = ${id} ${lock}`) as Promise<Row | null>;
}

/**
 * The insert of one row as a fragment returning what the insert assigns (id, created_at,
 * updated_at: the rest is what was written), inserting nothing unless `guard` holds (a
 * single-statement write puts its conditions there). INSERT … SELECT gives its values no column
 * type to take, so a table whose fields are not text must cast them in `writeAs`.
 */
export function insertFragment<Row extends Stored, Fields extends object>(
  table: Table<Row, Fields>,
  institutionId: number,
  fields: Fields,
  guard: FragmentSqlToken,
): FragmentSqlToken {
  return insertSelect(
    table,
    institutionId,
    fields,
    guard,
    sql.fragment`id, created_at, updated_at`,
  );
}

/** `INSERT … SELECT` of one row where `guard` holds, `RETURNING` what `returning` names. */
function insertSelect<Row extends Stored, Fields extends object>(
  table: Table<Row, Fields>,
  institutionId: number,
  fields: Fields,
  guard: FragmentSqlToken,
  returning: FragmentSqlToken,
): FragmentSqlToken {
  const values = valuesOf(table as Table<Stored, Fields>, fields);
  const columns = insertColumns(
    table,
    values.map(([name]) => name),
  );
  return sql.fragment`
    INSERT INTO ${sql.identifier([table.name])} (${columns})
    SELECT ${institutionId}, ${sql.join(
      values.map(([, value]) => value),
      sql.fragment`, `,
    )}
    WHERE ${guard}
    RETURNING ${returning}`;
}

/**
 * Many rows of one table in one `INSERT`, all with the same fields, `RETURNING` what the insert
 * assigns, in the order of the rows (by id: identity values are drawn row by row, in order).
 * The rows go as one JSON parameter, each field typed by the column it fills (the table's row
 * type, `json_populate_recordset`) rather than by `writeAs`: for a table whose `writeAs` only
 * casts (as gifts'), the same values, without a parameter and a fragment per field per row.
 */
export function insertRowsFragment<Fields extends object>(
  table: Table<Stored, Fields>,
  institutionId: number,
  rows: readonly Fields[],
): FragmentSqlToken {
  const names = Object.keys(rows[0]!);
  const columns = insertColumns(table, names);
  const fields = sql.join(
    names.map((name) => sql.identifier(['r', name])),
    sql.fragment`, `,
  );
  return sql.fragment`
    WITH inserted AS (
      INSERT INTO ${sql.identifier([table.name])} (${columns})
      SELECT ${institutionId}, ${fields}
      FROM json_populate_recordset(NULL::${sql.identifier([table.name])}, ${sql.json(rows)})
        WITH ORDINALITY AS r
      ORDER BY r.ordinality
      RETURNING id, created_at, updated_at)
    SELECT id, created_at, updated_at FROM inserted ORDER BY id`;
}

/**
 * The insert of one row, made only where `guard` holds (conditions a rule left to the insert):
 * the row as written, or null when the guard refused it and nothing was inserted.
 */
export function insertRowWhere<Row extends Stored, Fields extends object>(
  db: CommonQueryMethods,
  table: Table<Row, Fields>,
  institutionId: number,
  fields: Fields,
  guard: FragmentSqlToken,
): Promise<Row | null> {
  return db.maybeOne(
    sql.type(table.row)`${insertSelect(table, institutionId, fields, guard, columnsOf(table))}`,
  ) as Promise<Row | null>;
}

export function insertRow<Row extends Stored, Fields extends object>(
  db: CommonQueryMethods,
  table: Table<Row, Fields>,
  institutionId: number,
  fields: Fields,
): Promise<Row> {
  const values = valuesOf(table as Table<Stored, Fields>, fields);
  const columns = insertColumns(
    table,
    values.map(([name]) => name),
  );
  return db.one(sql.type(table.row)`
    INSERT INTO ${sql.identifier([table.name])} (${columns})
    VALUES (${institutionId}, ${sql.join(
      values.map(([, value]) => value),
      sql.fragment`, `,
    )})
    RETURNING ${columnsOf(table)}`) as Promise<Row>;
}

export function updateRow<Row extends Stored, Fields extends object>(
  db: CommonQueryMethods,
  table: Table<Row, Fields>,
  institutionId: number,
  id: number,
  fields: Fields,
): Promise<Row> {
  const assignments = valuesOf(table as Table<Stored, Fields>, fields).map(
    ([name, value]) => sql.fragment`${sql.identifier([name])} = ${value}`,
  );
  return db.one(sql.type(table.row)`
    UPDATE ${sql.identifier([table.name])}
    SET ${sql.join(assignments, sql.fragment`, `)}, updated_at = now()
    WHERE institution_id = ${institutionId} AND id = ${id}
    RETURNING ${columnsOf(table)}`) as Promise<Row>;
}

/** Reads one record of the institution and presents it (GET /things/{id}). */
export const retrieveFrom =
  <Row extends Stored>(table: Table<Row, object>, present: (row: Row) => JsonObject): Retrieval =>
  async (db, institutionId, id) => {
    const row = await findRow(db, table, institutionId, id);
    return row && present(row);
  };

/**
 * A resource's collection as a list: its table's rows, newest first by id (or by its sort value,
 * then id), with its own filters.
 */
export function collectionList<Row extends Stored>(
  identity: { path: string },
  table: Table<Row, object>,
  spec: Pick<ListSpec<Row>, 'present' | 'filters' | 'sort' | 'byDefault'>,
): ListSpec<Row> {
  return {
    endpoint: `/api/v1${identity.path}`,
    from: sql.fragment`${sql.identifier([table.name])}`,
    institutionColumn: sql.fragment`institution_id`,
    key: sql.fragment`id`,
    columns: columnsOf(table),
    row: table.row,
    keyOf: (row) => row.id,
    ...spec,
  };
}
