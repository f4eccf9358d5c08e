import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { csvLine } from '../imports/errorsCsv.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../json.js';
import { pageStatement } from '../pagination/listPage.js';
import type { ListSpec } from '../pagination/listSpec.js';
import type { KeysetPosition, ListRequest } from '../pagination/listRequest.js';

/** Rows read per statement while a report is written out. */
const CSV_PAGE_ROWS = 1_000;

/**
 * A report row's columns, as its schema names them: a nested object's fields as
 * `object.field` (an awarded student's `student.first_name`), so that every cell is plain text.
 */
export function csvColumns(item: z.ZodType): string[] {
  const unwrapped = unwrap(item);
  if (!(unwrapped instanceof z.ZodObject)) return [];
  return Object.entries(unwrapped.shape as Record<string, z.ZodType>).flatMap(([name, field]) => {
    const nested = csvColumns(field);
    return nested.length ? nested.map((column) => `${name}.${column}`) : [name];
  });
}

function unwrap(schema: z.ZodType): z.ZodType {
  return schema instanceof z.ZodNullable || schema instanceof z.ZodOptional
    ? unwrap(schema.unwrap() as z.ZodType)
    : schema;
}

function cellOf(row: JsonObject, column: string): string {
  let value: JsonValue | undefined = row;
  for (const part of column.split('.')) value = isJsonObject(value) ? value[part] : undefined;
  if (value === undefined || value === null) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/**
 * The whole report as CSV, for its filters: the header, then every row in the list's order,
 * read page by page with the list's own statement (the cursor engine's keyset) inside one
 * REPEATABLE READ transaction, so that the file is one snapshot, however long it takes to send.
 * Cells a spreadsheet would run as formulas are neutralised (csvLine, as errors.csv).
 */
export async function writeReportCsv<Row>(
  pool: DatabasePool,
  spec: ListSpec<Row>,
  columns: readonly string[],
  filters: Record<string, string>,
  institutionId: number,
  write: (text: string) => Promise<boolean>,
): Promise<void> {
  if (!(await write(csvLine(columns)))) return;
  await pool.transaction(async (tx) => {
    await tx.query(sql.unsafe`SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY`);
    let position: KeysetPosition | null = null;
    for (;;) {
      const request: ListRequest = {
        limit: CSV_PAGE_ROWS,
        direction: 'after',
        position,
        filters,
      };
      const rows = await tx.any(pageStatement(spec, request, institutionId));
      const page = rows.slice(0, CSV_PAGE_ROWS);
      let text = '';
      for (const row of page) {
        const presented = spec.present(row);
        text += csvLine(columns.map((column) => cellOf(presented, column)));
      }
      if (text && !(await write(text))) return;
      const last = page.at(-1);
      if (rows.length <= CSV_PAGE_ROWS || !last) return;
      position =
        last.page_sort_value === undefined
          ? { key: spec.keyOf(last) }
          : { key: spec.keyOf(last), value: last.page_sort_value };
    }
  });
}
