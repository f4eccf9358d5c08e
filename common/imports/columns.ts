import type { z } from 'zod';
import type { FieldError } from '../errors.js';
import type { JsonObject, JsonValue } from '../json.js';
import { donorShape } from '../resources/donors/schema.js';
import { giftShape } from '../resources/gifts/schema.js';
import type { Shape } from '../validation/validateBody.js';
import type { ImportResource } from './schema.js';

/**
 * How a file's columns become the JSON body of the single-record write. A CSV cell is text; the
 * field's schema (in the resource's Shape, the one place its rules live) says whether the text
 * stands for a number, true/false, a list or an object. Only the reading happens here: a cell
 * that does not read as its kind is passed on as text, and the write's own validation answers
 * it exactly as it answers the same JSON body (`must be a number`).
 */
type Kind = 'number' | 'boolean' | 'array' | 'words' | 'object' | 'text';

/**
 * Columns that name another record by something other than its id, not fields of the write: a
 * gift row's donor, and its campaign and appeal by code (rows.ts looks them up).
 */
export const matchColumns: Record<ImportResource, readonly string[]> = {
  donors: [],
  gifts: ['donor_external_id', 'donor_email', 'campaign_code', 'appeal_code'],
};

export const shapes: Record<ImportResource, Shape> = {
  donors: donorShape,
  gifts: giftShape,
};

interface ZodDefinition {
  type: string;
  innerType?: z.ZodType;
  in?: z.ZodType;
  element?: z.ZodType;
  shape?: Record<string, z.ZodType>;
}

const definitionOf = (schema: z.ZodType) =>
  (schema as unknown as { _zod: { def: ZodDefinition } })._zod.def;

/** The schema under optional, nullable, default and the input side of a pipe. */
function unwrap(schema: z.ZodType): z.ZodType {
  let current = schema;
  for (;;) {
    const definition = definitionOf(current);
    const inner = definition.innerType ?? (definition.type === 'pipe' ? definition.in : undefined);
    if (!inner) return current;
    current = inner;
  }
}

function kindOf(schema: z.ZodType): Kind {
  const type = definitionOf(unwrap(schema)).type;
  if (type === 'number' || type === 'int') return 'number';
  if (type === 'boolean') return 'boolean';
  if (type === 'array') {
    const element = definitionOf(unwrap(schema)).element;
    return element && definitionOf(unwrap(element)).type === 'enum' ? 'words' : 'array';
  }
  if (type === 'object') return 'object';
  return 'text';
}

/** The nested fields of an object field, by name (`address` → line1, city, ...). */
function subSchemas(schema: z.ZodType): Record<string, z.ZodType> {
  return definitionOf(unwrap(schema)).shape ?? {};
}

/** A field's columns: an object's nested fields, as deep as they go (`tribute.notify.email`). */
function columnsOf(name: string, schema: z.ZodType): string[] {
  return kindOf(schema) === 'object'
    ? Object.entries(subSchemas(schema)).flatMap(([sub, inner]) =>
        columnsOf(`${name}.${sub}`, inner),
      )
    : [name];
}

/** The schema a column's cell is read by: `tribute.honoree_donor_id` is a number. */
function schemaOf(resource: ImportResource, column: string): z.ZodType | undefined {
  const [field, ...path] = column.split('.');
  let schema = shapes[resource][field!]?.schema;
  for (const sub of path) schema = schema && subSchemas(schema)[sub];
  return schema;
}

/**
 * The columns a CSV of the resource may have: its fields (an object field as `address.city`,
 * one column per nested field) and the columns that match rows to records.
 */
export function knownColumns(resource: ImportResource): string[] {
  return [
    ...Object.entries(shapes[resource]).flatMap(([name, spec]) => columnsOf(name, spec.schema)),
    ...matchColumns[resource],
  ];
}

/** The header's problems: unknown columns and columns named twice, each reported by name. */
export function headerProblems(resource: ImportResource, header: readonly string[]): FieldError[] {
  const known = new Set(knownColumns(resource));
  const problems: FieldError[] = [];
  header.forEach((column, index) => {
    if (!known.has(column))
      problems.push({
        param: `columns.${index}`,
        code: 'unknown_field',
        message: `"${column.slice(0, 100)}" is not a column of ${resource}; the columns are: ${[...known].join(', ')}`,
      });
    else if (header.indexOf(column) < index)
      problems.push({
        param: `columns.${index}`,
        code: 'invalid_value',
        message: `"${column}" is named twice`,
      });
  });
  return problems;
}

const NUMBER = /^-?\d+(\.\d+)?$/;

/** `1;2;3` for a list of ids; a cell starting with `[` is read as JSON. */
function readList(cell: string): JsonValue {
  if (cell.startsWith('[')) {
    try {
      return JSON.parse(cell) as JsonValue;
    } catch {
      return cell;
    }
  }
  const items = cell.split(';').map((item) => item.trim());
  return items.every((item) => NUMBER.test(item)) ? items.map(Number) : cell;
}

/** `do_not_mail;do_not_email` for a list of names (communication_restrictions); `[` as JSON. */
function readWords(cell: string): JsonValue {
  if (cell.startsWith('[')) return readList(cell);
  return cell
    .split(';')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

function readCell(kind: Kind, cell: string): JsonValue {
  switch (kind) {
    case 'number':
      return NUMBER.test(cell.trim()) ? Number(cell.trim()) : cell;
    case 'boolean': {
      const lowered = cell.trim().toLowerCase();
      return lowered === 'true' ? true : lowered === 'false' ? false : cell;
    }
    case 'array':
      return readList(cell);
    case 'words':
      return readWords(cell);
    default:
      return cell;
  }
}

/**
 * One CSV row as the JSON body of the write: an empty cell is a field not sent (its default
 * applies); `address.city` goes into `address`, `tribute.notify.email` into `tribute.notify`, so
 * an object no cell of the row fills is not sent at all; `designations` stays text here
 * (`fund_code:amount;...`: its fund codes are looked up with the chunk's, see rows.ts).
 */
export function bodyOfCells(
  resource: ImportResource,
  header: readonly string[],
  cells: readonly string[],
): JsonObject {
  const body: JsonObject = {};
  header.forEach((column, index) => {
    const cell = cells[index] ?? '';
    if (cell === '') return;
    const path = column.split('.');
    const name = path.pop()!;
    let parent = body;
    for (const step of path) parent = (parent[step] ??= {}) as JsonObject;
    const schema = schemaOf(resource, column);
    if (column === 'designations' && !cell.startsWith('[')) parent[name] = cell;
    else parent[name] = schema ? readCell(kindOf(schema), cell) : cell;
  });
  return body;
}

/** `GEN:60;ATH:40.50` → its parts; null when the text is not of that form. */
export function parseDesignationText(
  text: string,
): { fund_code: string; amount: JsonValue }[] | null {
  const parts = text
    .split(';')
    .map((part) => part.trim())
    .filter((part) => part !== '');
  const parsed = parts.map((part) => {
    const colon = part.lastIndexOf(':');
    if (colon <= 0) return null;
    const amount = part.slice(colon + 1).trim();
    return {
      fund_code: part.slice(0, colon).trim(),
      amount: NUMBER.test(amount) ? Number(amount) : amount,
    };
  });
  return parsed.every((part) => part !== null) ? parsed : null;
}

/** The `amount` of a row as cents, when it is a number with at most 2 decimals (control totals). */
export function amountCents(value: JsonValue | undefined): bigint | null {
  const text = typeof value === 'number' ? String(value) : typeof value === 'string' ? value : '';
  const match = /^(\d+)(?:\.(\d{1,2}))?$/.exec(text.trim());
  if (!match) return null;
  return BigInt(match[1]!) * 100n + BigInt((match[2] ?? '').padEnd(2, '0'));
}

/**
 * The largest sum an import keeps (its `amount_total` and `expected_amount`, numeric(16,2)), in
 * cents: 99999999999999.99. A sum of up to IMPORT_MAX_ROWS amounts may pass any one gift's bound.
 */
export const MAX_TOTAL_CENTS = 10n ** 16n - 1n;

export const centsText = (cents: bigint) =>
  `${cents / 100n}.${String(cents % 100n).padStart(2, '0')}`;
