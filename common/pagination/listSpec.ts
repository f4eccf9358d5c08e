import { sql, type FragmentSqlToken } from 'slonik';
import type { z } from 'zod';
import { errors } from '../errors.js';
import type { JsonObject } from '../json.js';
import { calendarDate, recordId } from '../validation/fields.js';

/** One filter of a list: how its query value is read, and what it means in SQL. */
export interface FilterSpec {
  /** The normalised value (what the cursor pins), or an invalid_parameter error. */
  parse(param: string, raw: string): string;
  condition(value: string): FragmentSqlToken;
}

/**
 * A list endpoint: the rows an institution may see, newest first by one integer key (a total
 * order, so keyset paging never skips or repeats a row), and the filters it accepts.
 */
export interface ListSpec<Row> {
  endpoint: string;
  from: FragmentSqlToken;
  institutionColumn: FragmentSqlToken;
  /** A condition every row of the list meets, whatever the filters (none when absent). */
  where?: FragmentSqlToken;
  key: FragmentSqlToken;
  columns: FragmentSqlToken;
  row: z.ZodType<Row>;
  keyOf(row: Row): number;
  present(row: Row): JsonObject;
  filters: Record<string, FilterSpec>;
  /** Filters the first request must send (they are pinned for the pages after it). */
  required?: readonly string[];
}

/** A record id in a query parameter, normalised (`007` is `7`), or an invalid_parameter error. */
export function parseIdParameter(param: string, raw: string): string {
  const parsed = /^\d{1,16}$/.test(raw) ? recordId.safeParse(Number(raw)) : null;
  if (!parsed?.success)
    throw errors.invalidParameter(param, `${param} must be a positive integer id.`);
  return String(parsed.data);
}

export const idFilter = (column: FragmentSqlToken): FilterSpec => ({
  parse: parseIdParameter,
  condition: (value) => sql.fragment`${column} = ${Number(value)}`,
});

export const enumFilter = (column: FragmentSqlToken, values: readonly string[]): FilterSpec => ({
  parse(param, raw) {
    if (!values.includes(raw))
      throw errors.invalidParameter(param, `${param} must be one of: ${values.join(', ')}.`);
    return raw;
  },
  condition: (value) => sql.fragment`${column} = ${value}`,
});

export const dateFilter = (column: FragmentSqlToken, comparison: '>=' | '<='): FilterSpec => ({
  parse(param, raw) {
    if (!calendarDate.safeParse(raw).success) {
      throw errors.invalidParameter(param, `${param} must be a real date written YYYY-MM-DD.`);
    }
    return raw;
  },
  condition: (value) =>
    comparison === '>='
      ? sql.fragment`${column} >= ${value}::date`
      : sql.fragment`${column} <= ${value}::date`,
});

/** `q`: case-insensitive "contains" over one or more text columns, taken literally. */
export const textSearch = (columns: FragmentSqlToken[]): FilterSpec => ({
  parse(param, raw) {
    const value = raw.trim();
    if (value === '' || value.length > 200 || value.includes('\u0000')) {
      throw errors.invalidParameter(param, `${param} must be 1 to 200 characters.`);
    }
    return value;
  },
  condition(value) {
    const pattern = `%${value.replace(/[\\%_]/g, (match) => `\\${match}`)}%`;
    return sql.fragment`(${sql.join(
      columns.map((column) => sql.fragment`${column} ILIKE ${pattern}`),
      sql.fragment` OR `,
    )})`;
  },
});
