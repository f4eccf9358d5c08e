import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { isJsonObject, type JsonValue } from '../json.js';
import { knownColumns } from './columns.js';
import type { FileRow } from './queries.js';
import type { ImportResource, ImportRow } from './schema.js';
import type { RowError } from './rows.js';

/**
 * A cell a spreadsheet would run as a formula (`=`, `+`, `-`, `@`, tab, carriage return) is
 * prefixed with `'`, which spreadsheets show as text: errors.csv is opened by people, and a row
 * as sent may carry `=HYPERLINK(...)` (OWASP: CSV injection). The imported record keeps the text
 * exactly as sent; only this download neutralises it.
 */
export const neutralise = (cell: string) => (/^[=+\-@\t\r]/.test(cell) ? `'${cell}` : cell);

const quote = (cell: string) => (/[",\r\n]/.test(cell) ? `"${cell.replaceAll('"', '""')}"` : cell);

export const csvLine = (cells: readonly string[]) =>
  `${cells.map((cell) => quote(neutralise(cell))).join(',')}\r\n`;

const describe = (errors: RowError[]) =>
  errors.map((error) => `${error.param ?? 'row'}: ${error.message} (${error.code})`).join('; ');

/** A JSON row's value as a cell: text as it is, anything else as JSON. */
const cellOf = (value: JsonValue | undefined) =>
  value === undefined || value === null
    ? ''
    : typeof value === 'string'
      ? value
      : JSON.stringify(value);

const chunkWithErrors = z.object({
  first_row: z.number(),
  rows: z.array(z.json()),
  errors: z.record(z.string(), z.array(z.any())),
});

/**
 * errors.csv: the header as sent plus `errors`, then each failed row as sent with its problems,
 * read chunk by chunk (a file of many failed rows is never whole in memory).
 */
export async function* errorsCsv(
  pool: DatabasePool,
  imp: ImportRow,
  file: FileRow,
): AsyncGenerator<string> {
  yield csvLine([...file.columns, 'errors']);
  for (let chunk = 0; ; chunk += 1) {
    const found = await pool.maybeOne(sql.type(chunkWithErrors)`
      SELECT c.first_row, c.rows,
             coalesce((SELECT jsonb_object_agg(e.row_number, e.errors) FROM import_row_errors e
                       WHERE e.institution_id = c.institution_id AND e.import_id = ${imp.id}
                         AND e.row_number >= c.first_row
                         AND e.row_number < c.first_row + json_array_length(c.rows)),
                      '{}') AS errors
      FROM import_chunks c
      WHERE c.institution_id = ${imp.institution_id} AND c.file_id = ${imp.file_id}
        AND c.chunk = ${chunk}`);
    if (!found) return;
    let text = '';
    for (const [row, errors] of Object.entries(found.errors)) {
      const raw = found.rows[Number(row) - found.first_row] as JsonValue;
      const cells =
        file.format === 'csv' && Array.isArray(raw)
          ? raw.map(String)
          : file.columns.map((column) => (isJsonObject(raw) ? cellOf(raw[column]) : ''));
      text += csvLine([...cells, describe(errors as RowError[])]);
    }
    if (text) yield text;
  }
}

/** A CSV template of a resource: its columns, for a spreadsheet to fill in. */
export const templateCsv = (resource: ImportResource) => csvLine(knownColumns(resource));
