import { Queue, type ConnectionOptions } from 'bullmq';
import { sql, type DatabasePool } from 'slonik';
import { queueLocation } from '../queueShards.js';
import { importColumns } from './queries.js';
import { importRow, type ImportRow } from './schema.js';

/** Import chunks have a queue of their own, so a large file never holds up a single write. */
export const IMPORT_QUEUE = 'imports';

/** One queue, in one cluster slot (`<QUEUE_PREFIX>:{imports}`). */
export const createImportQueue = (connection: ConnectionOptions, queuePrefix: string): Queue => {
  const { name, prefix } = queueLocation(queuePrefix, IMPORT_QUEUE);
  return new Queue(name, { connection, prefix });
};

/**
 * The most imports of one institution validating or importing at once; its later ones stay
 * `queued` until one of these ends. So one institution's chunks ahead of another's in the queue
 * are a bounded few, however many files it sends.
 */
export const RUNNING_PER_INSTITUTION = 2;

/**
 * The imports the sweep moves on, fair across institutions: each institution's running imports,
 * then its queued ones while it runs fewer than RUNNING_PER_INSTITUTION, taken in turns (every
 * institution's first, then every institution's second, ...), oldest first within a turn. So
 * `limit` cuts the list short at the same turn for everyone, never at one institution's 100th.
 */
export function importsToAdvance(pool: DatabasePool, limit: number): Promise<readonly ImportRow[]> {
  return pool.any(sql.type(importRow)`
    SELECT ${importColumns} FROM (
      SELECT *, row_number() OVER (
               PARTITION BY institution_id ORDER BY status = 'queued', id) AS turn
      FROM imports WHERE status IN ('queued', 'validating', 'importing')) running
    WHERE status <> 'queued' OR turn <= ${RUNNING_PER_INSTITUTION}
    ORDER BY turn, id LIMIT ${limit}`);
}
