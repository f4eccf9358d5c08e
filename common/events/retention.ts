import { sql, type CommonQueryMethods } from 'slonik';

/**
 * Deletes the events older than the retention period (EVENT_RETENTION_DAYS) in batches, so that
 * no one statement holds many row locks or runs long; returns how many went.
 */
export async function pruneEvents(
  db: CommonQueryMethods,
  retentionDays: number,
  batchSize = 5_000,
): Promise<number> {
  let total = 0;
  for (;;) {
    const result = await db.query(sql.unsafe`
      DELETE FROM events
      WHERE ctid IN (
        SELECT ctid FROM events
        WHERE created_at < now() - make_interval(days => ${retentionDays})
        LIMIT ${batchSize})`);
    total += result.rowCount;
    if (result.rowCount < batchSize) return total;
  }
}
