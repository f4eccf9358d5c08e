import { sql, type CommonQueryMethods } from 'slonik';

/**
 * Deletes the stored rows of import files older than IMPORT_FILE_RETENTION_DAYS (their chunks,
 * and the row errors and duplicate candidates of their imports, from which `errors`,
 * `errors.csv` and `duplicates` are read), so that the personal data a file carries, and what
 * an erasure must reach, is bounded in time. The import and the file's summary (counts, totals,
 * columns, checksum) stay. A file whose import is still running is left alone. In batches of
 * files, so that no one statement holds many row locks; returns how many files were emptied.
 */
export async function pruneImportFiles(
  db: CommonQueryMethods,
  retentionDays: number,
  batchSize = 100,
): Promise<number> {
  let total = 0;
  for (;;) {
    const emptied = await db.anyFirst(sql.unsafe`
      WITH old AS (
        SELECT f.institution_id, f.id, i.id AS import_id FROM import_files f
        LEFT JOIN imports i ON i.institution_id = f.institution_id AND i.file_id = f.id
        WHERE f.created_at < now() - make_interval(days => ${retentionDays})
          AND (i.status IS NULL OR i.status NOT IN ('queued', 'validating', 'importing'))
          AND (EXISTS (SELECT FROM import_chunks c
                       WHERE c.institution_id = f.institution_id AND c.file_id = f.id)
            OR EXISTS (SELECT FROM import_row_errors e
                       WHERE e.institution_id = i.institution_id AND e.import_id = i.id)
            OR EXISTS (SELECT FROM import_row_duplicates d
                       WHERE d.institution_id = i.institution_id AND d.import_id = i.id))
        ORDER BY f.created_at
        LIMIT ${batchSize}),
      chunks AS (
        DELETE FROM import_chunks c USING old
        WHERE c.institution_id = old.institution_id AND c.file_id = old.id),
      row_errors AS (
        DELETE FROM import_row_errors e USING old
        WHERE e.institution_id = old.institution_id AND e.import_id = old.import_id),
      candidates AS (
        DELETE FROM import_row_duplicates d USING old
        WHERE d.institution_id = old.institution_id AND d.import_id = old.import_id)
      SELECT id FROM old`);
    total += emptied.length;
    if (emptied.length < batchSize) return total;
  }
}
