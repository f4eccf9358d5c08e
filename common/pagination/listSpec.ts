import { sql, type FragmentSqlToken } from 'slonik';
import type { z } from 'zod';
import { errors } from '../errors.js';
import type { JsonObject } from '../json.js';
import { calendarDate, recordId } from '../validation/fields.js';

/** `<` is strictly before (`due_before`); the others include the date. */
export type DateComparison = '>=' | '<=' | '<';

/** What a filter accepts, for the OpenAPI document (common/openapi); it changes no behaviour. */
export type FilterDescription =
  | { kind: 'id' }
  | { kind: 'enum'; values: readonly string[] }
  | { kind: 'date'; comparison: DateComparison }
  | { kind: 'text'; maxLength: number }
  | { kind: 'instant'; comparison: '>=' | '<=' }
  | { kind: 'pattern'; pattern: string; example: string };

/** One filter of a list: how its query value is read, and what it means in SQL. */
export interface FilterSpec {
  /** The normalised value (what the cursor pins), or an invalid_parameter error. */
  parse(param: string, raw: string): string;
  condition(value: string): FragmentSqlToken;
  /** What the filter accepts; a filter that reads its value with parseIdParameter may omit it. */
  description?: FilterDescription;
  /**
   * The filter chooses what the list is made of (a report's fiscal year), through the list's
   * `source`, rather than being a condition on its rows: `condition` is not used.
   */
  shapesSource?: boolean;
  /**
   * The column's values rise with the list's key (a gift's date with its id), and an index on
   * (institution, column, key) serves a range of them: its pages are read windowed
   * (listPage.ts), so that a range far from the newest rows costs its own size.
   */
  followsKey?: boolean;
}

/** The types a sort value may have: the cursor's text form is cast back to it. */
export type SortType = 'timestamptz' | 'numeric' | 'text';

/**
 * What a list is ordered by before its key: a column that is never null, of one of the sort
 * types. Ties are broken by the key, in the same direction as the value (newest `captured_at`
 * first, then the newest id), so that (value, key) is a total order. An index on
 * (institution, …, column, key) in that order serves the pages.
 */
export interface SortValue {
  column: FragmentSqlToken;
  type: SortType;
  /** `desc`: highest (newest) first; `asc`: lowest first. */
  direction: 'desc' | 'asc';
}

/**
 * A list endpoint: the rows an institution may see, newest first by one integer key (a total
 * order, so keyset paging never skips or repeats a row), or by a sort value and then that key,
 * and the filters it accepts.
 */
export interface ListSpec<Row> {
  endpoint: string;
  from: FragmentSqlToken;
  /**
   * A list whose rows are computed from its filters (a report for one fiscal year): the
   * relation the page reads instead of `from`, made from the filters sent or pinned (those
   * marked `shapesSource` among them) and the institution asking.
   */
  source?(filters: Readonly<Record<string, string>>, institutionId: number): FragmentSqlToken;
  institutionColumn: FragmentSqlToken;
  /** A condition every row of the list meets, whatever the filters (none when absent). */
  where?: FragmentSqlToken;
  /**
   * A condition rows meet unless the filter `unless` is sent: merged donors are left out of the
   * donor list except for `status=merged` (constituents.md §5).
   */
  byDefault?: { unless: string; condition: FragmentSqlToken };
  key: FragmentSqlToken;
  /**
   * Ordered by this value first (the key breaks ties) instead of by the key alone. Its pages are
   * always read by the plain statement: `followsKey` filters are not read windowed on it.
   */
  sort?: SortValue;
  columns: FragmentSqlToken;
  row: z.ZodType<Row>;
  keyOf(row: Row): number;
  present(row: Row): JsonObject;
  filters: Record<string, FilterSpec>;
  /** Filters the first request must send (they are pinned for the pages after it). */
  required?: readonly string[];
  /** Filters that mean something only beside another: by filter, the one it needs. */
  needs?: Readonly<Record<string, string>>;
}

/** A record id in a query parameter, normalised (`007` is `7`), or an invalid_parameter error. */
export function parseIdParameter(param: string, raw: string): string {
  const parsed = /^\d{1,16}$/.test(raw) ? recordId.safeParse(Number(raw)) : null;
  if (!parsed?.success)
    throw errors.invalidParameter(param, `${param} must be a positive integer id.`);
  return String(parsed.data);
}

/** The description of a filter: its own, or that of the id filters when it parses an id. */
export function describeFilter(filter: FilterSpec): FilterDescription | null {
  if (filter.description) return filter.description;
  return filter.parse === parseIdParameter ? { kind: 'id' } : null;
}

export const idFilter = (column: FragmentSqlToken): FilterSpec => ({
  description: { kind: 'id' },
  parse: parseIdParameter,
  condition: (value) => sql.fragment`${column} = ${Number(value)}`,
});

export const enumFilter = (column: FragmentSqlToken, values: readonly string[]): FilterSpec => ({
  description: { kind: 'enum', values },
  parse(param, raw) {
    if (!values.includes(raw))
      throw errors.invalidParameter(param, `${param} must be one of: ${values.join(', ')}.`);
    return raw;
  },
  condition: (value) => sql.fragment`${column} = ${value}`,
});

export const dateFilter = (column: FragmentSqlToken, comparison: DateComparison): FilterSpec => ({
  description: { kind: 'date', comparison },
  parse(param, raw) {
    if (!calendarDate.safeParse(raw).success) {
      throw errors.invalidParameter(param, `${param} must be a real date written YYYY-MM-DD.`);
    }
    return raw;
  },
  condition: (value) =>
    ({
      '>=': sql.fragment`${column} >= ${value}::date`,
      '<=': sql.fragment`${column} <= ${value}::date`,
      '<': sql.fragment`${column} < ${value}::date`,
    })[comparison],
});

/** `q`: case-insensitive "contains" over one or more text columns, taken literally. */
const MAX_SEARCH_LENGTH = 200;

export const textSearch = (columns: FragmentSqlToken[]): FilterSpec => ({
  description: { kind: 'text', maxLength: MAX_SEARCH_LENGTH },
  parse(param, raw) {
    const value = raw.trim();
    if (value === '' || value.length > MAX_SEARCH_LENGTH || value.includes('\u0000')) {
      throw errors.invalidParameter(
        param,
        `${param} must be 1 to ${MAX_SEARCH_LENGTH} characters.`,
      );
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

const TIMESTAMP = /^(\d{4}-\d{2}-\d{2})T\d{2}:\d{2}:\d{2}(\.\d{1,3})?(Z|[+-]\d{2}:\d{2})$/;

/**
 * A bound on a timestamp column, inclusive: an ISO 8601 timestamp with its zone (to the
 * millisecond, as timestamps are stored), or a date, meaning the whole UTC day (from its first
 * millisecond, or to its last). Normalised to the instant in UTC, which the cursor pins.
 */
export const instantFilter = (column: FragmentSqlToken, comparison: '>=' | '<='): FilterSpec => ({
  description: { kind: 'instant', comparison },
  parse(param, raw) {
    const match = TIMESTAMP.exec(raw);
    const instant = match && calendarDate.safeParse(match[1]).success ? Date.parse(raw) : NaN;
    const normalised = calendarDate.safeParse(raw).success
      ? `${raw}T${comparison === '>=' ? '00:00:00.000' : '23:59:59.999'}Z`
      : Number.isNaN(instant)
        ? ''
        : new Date(instant).toISOString();
    // Year 0000 is no year to Postgres, and a zone can carry year 9999 past the edge.
    if (!/^(?!0000)\d{4}-/.test(normalised))
      throw errors.invalidParameter(
        param,
        `${param} must be a date written YYYY-MM-DD or an ISO 8601 timestamp with its time zone, such as 2026-11-21T10:00:00Z.`,
      );
    return normalised;
  },
  condition: (value) =>
    comparison === '>='
      ? sql.fragment`${column} >= ${value}::timestamptz`
      : sql.fragment`${column} <= ${value}::timestamptz`,
});
