import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { importRow, type ImportRow } from './schema.js';

/** The columns of an import as its row schema reads them. */
export const importColumns = sql.fragment`
  id, institution_id, file_id, resource, mode, on_match, dry_run, status, chunks_total, rows_total,
  rows_processed, rows_succeeded, rows_failed, rows_skipped, amount_total::text AS amount_total,
  expected_rows, expected_amount::text AS expected_amount, failure_code, failure_message,
  request_id, api_key_id, created_at, updated_at, completed_at`;

export function findImport(
  db: CommonQueryMethods,
  institutionId: number,
  id: number,
  lock = sql.fragment``,
): Promise<ImportRow | null> {
  return db.maybeOne(sql.type(importRow)`
    SELECT ${importColumns} FROM imports
    WHERE institution_id = ${institutionId} AND id = ${id} ${lock}`);
}

export const fileRow = z.object({
  id: z.number(),
  format: z.enum(['csv', 'json']),
  columns: z.array(z.string()),
  rows_total: z.number(),
  amount_total: z.string().nullable(),
});
export type FileRow = z.infer<typeof fileRow>;

export function findFile(
  db: CommonQueryMethods,
  institutionId: number,
  id: number,
): Promise<FileRow | null> {
  return db.maybeOne(sql.type(fileRow)`
    SELECT id, format, columns, rows_total, amount_total::text AS amount_total
    FROM import_files WHERE institution_id = ${institutionId} AND id = ${id}`);
}

/**
 * A column's cell in a row of a stored file, for SQL reading `value` from
 * `json_array_elements(import_chunks.rows)`: a CSV row is a list of cells, a JSON row an object.
 * Null when a CSV file has no such column.
 */
export function cellOfFile(file: FileRow, column: string) {
  if (file.format === 'json') return sql.fragment`value ->> ${column}`;
  const index = file.columns.indexOf(column);
  return index < 0 ? null : sql.fragment`value ->> ${index}::int`;
}

/** A staged file no import claimed: its chunks go with it. */
export async function deleteUnclaimedFile(
  db: CommonQueryMethods,
  institutionId: number,
  id: number,
): Promise<void> {
  await db.query(sql.unsafe`
    DELETE FROM import_files f
    WHERE f.institution_id = ${institutionId} AND f.id = ${id}
      AND NOT EXISTS (SELECT 1 FROM imports i
                      WHERE i.institution_id = f.institution_id AND i.file_id = f.id)`);
}
