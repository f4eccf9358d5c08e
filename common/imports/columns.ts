import type { z } from 'zod';
import type { FieldError } from '../errors.js';
import type { JsonObject, JsonValue } from '../json.js';
import { donorShape, maxContactPoints } from '../resources/donors/schema.js';
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
  donors: ['household_external_id'],
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
 * List fields a CSV may also spell out one cell per field of an element, `emails.0.address`,
 * `emails.0.type`, `emails.1.address` (a spreadsheet has no JSON), with N from 0 to one less than
 * the list's own maximum: the cells of one N build one element, as the JSON cell would.
 */
const flattenedLists: Record<ImportResource, readonly string[]> = {
  donors: ['emails', 'phones', 'addresses'],
  gifts: [],
};
const maxElements = maxContactPoints;

/** The fields of a list field's elements, by name (`emails` → address, type, status). */
function elementFields(resource: ImportResource, field: string): Record<string, z.ZodType> {
  const schema = shapes[resource][field]?.schema;
  const element = schema && definitionOf(unwrap(schema)).element;
  return element ? subSchemas(element) : {};
}

/** `emails.2.address` → the list, the element's place and its field; null for other columns. */
function flattenedColumn(
  resource: ImportResource,
  column: string,
): { field: string; index: number; sub: string } | null {
  const match = /^(\w+)\.(0|[1-9]\d?)\.(\w+)$/.exec(column);
  if (!match) return null;
  const [, field, index, sub] = match as unknown as [string, string, string, string];
  if (!flattenedLists[resource].includes(field) || Number(index) >= maxElements) return null;
  return Object.hasOwn(elementFields(resource, field), sub)
    ? { field, index: Number(index), sub }
    : null;
}

/** A list's element fields as columns of element N: `emails.N.address`, `emails.N.type`, ... */
const elementColumns = (resource: ImportResource, field: string, index: number | 'N') =>
  Object.keys(elementFields(resource, field)).map((sub) => `${field}.${index}.${sub}`);

/**
 * The columns of the resource's template: its fields (an object field as `address.city`, one
 * column per nested field; a list of contact points as the cells of its first element,
 * `emails.0.address`) and the columns that match rows to records. A file may also name any
 * other element (`emails.3.type`), or a list whole as a JSON cell (`emails`).
 */
export function knownColumns(resource: ImportResource): string[] {
  return [
    ...Object.entries(shapes[resource]).flatMap(([name, spec]) =>
      flattenedLists[resource].includes(name)
        ? elementColumns(resource, name, 0)
        : columnsOf(name, spec.schema),
    ),
    ...matchColumns[resource],
  ];
}

/** Every column a file may name, as a reader is told them (the elements as `emails.N.…`). */
function columnsInWords(resource: ImportResource): string {
  const lists = flattenedLists[resource];
  const plain = knownColumns(resource).filter((column) => !flattenedColumn(resource, column));
  if (!lists.length) return plain.join(', ');
  return `${plain.join(', ')}, ${lists.join(', ')} (a JSON list), or one cell per field of each element: ${lists
    .flatMap((field) => elementColumns(resource, field, 'N'))
    .join(', ')} (N from 0 to ${maxElements - 1})`;
}

const isKnown = (resource: ImportResource, column: string, known: Set<string>) =>
  known.has(column) ||
  flattenedLists[resource].includes(column) ||
  flattenedColumn(resource, column) !== null;

/** The header's problems: unknown columns and columns named twice, each reported by name. */
export function headerProblems(resource: ImportResource, header: readonly string[]): FieldError[] {
  const known = new Set(knownColumns(resource));
  const problems: FieldError[] = [];
  header.forEach((column, index) => {
    if (!isKnown(resource, column, known))
      problems.push({
        param: `columns.${index}`,
        code: 'unknown_field',
        message: `"${column.slice(0, 100)}" is not a column of ${resource}; the columns are: ${columnsInWords(resource)}`,
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

/** A CSV row as a write's body, and the params of its errors that are other columns. */
export interface RowBody {
  body: JsonObject;
  /**
   * The columns of the body's elements that moved (`emails.1` → `emails.2` when the row leaves
   * element 1 empty): an error of the write on the element names the column it came from.
   */
  columnOf: Record<string, string>;
  /**
   * A list the row fills both as its JSON cell and cell by cell: two answers for one field, so
   * the row fails on the JSON column and the list is not sent (the command judges the rest).
   */
  problems: FieldError[];
}

/**
 * One CSV row as the JSON body of the write: an empty cell is a field not sent (its default
 * applies); `address.city` goes into `address`, `tribute.notify.email` into `tribute.notify`, so
 * an object no cell of the row fills is not sent at all; `designations` stays text here
 * (`fund_code:amount;...`: its fund codes are looked up with the chunk's, see rows.ts). The cells
 * of `emails.N.*` build element N of `emails`; an N whose cells are all empty is no element, and
 * the elements keep the order of their N, gaps closed (`emails.0` and `emails.2` are the list's
 * two elements). A row may fill a list one way or the other, not both: a file may carry both
 * forms' columns, and each row is judged by the cells it fills.
 */
export function bodyOfCells(
  resource: ImportResource,
  header: readonly string[],
  cells: readonly string[],
): RowBody {
  const body: JsonObject = {};
  const elements = new Map<string, Map<number, JsonObject>>();
  header.forEach((column, index) => {
    const cell = cells[index] ?? '';
    if (cell === '') return;
    const element = flattenedColumn(resource, column);
    if (element) {
      const list = elements.get(element.field) ?? new Map<number, JsonObject>();
      elements.set(element.field, list);
      const fields = list.get(element.index) ?? {};
      list.set(element.index, fields);
      const schema = elementFields(resource, element.field)[element.sub]!;
      fields[element.sub] = readCell(kindOf(schema), cell);
      return;
    }
    const path = column.split('.');
    const name = path.pop()!;
    let parent = body;
    for (const step of path) parent = (parent[step] ??= {}) as JsonObject;
    const schema = schemaOf(resource, column);
    if (column === 'designations' && !cell.startsWith('[')) parent[name] = cell;
    else parent[name] = schema ? readCell(kindOf(schema), cell) : cell;
  });
  const columnOf: Record<string, string> = {};
  const problems: FieldError[] = [];
  for (const [field, list] of elements) {
    if (body[field] !== undefined) {
      const filled = header.filter(
        (column, index) =>
          (cells[index] ?? '') !== '' && flattenedColumn(resource, column)?.field === field,
      );
      problems.push({
        param: field,
        code: 'not_allowed',
        message: `"${field}" (the list as a JSON cell) and ${filled
          .slice(0, 3)
          .map((column) => `"${column}"`)
          .join(
            ', ',
          )}${filled.length > 3 ? ', …' : ''} (its elements cell by cell) both fill the list: fill one form or the other`,
      });
      delete body[field];
      continue;
    }
    const ordered = [...list.entries()].sort(([a], [b]) => a - b);
    body[field] = ordered.map(([, fields]) => fields);
    ordered.forEach(([index], place) => {
      if (index !== place) columnOf[`${field}.${place}`] = `${field}.${index}`;
    });
  }
  return { body, columnOf, problems };
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
