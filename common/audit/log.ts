import { sql, type DatabasePool } from 'slonik';
import type { Logger } from '../logger.js';

/** One audit row as the API records it (trust.md §3): no body, no query value. */
export interface AuditEntry {
  /** The caller's institution; null for a 401 whose key id is only presented (resolved on insert). */
  institutionId: number | null;
  occurredAt: Date;
  /** The key that made the request, or the key id a refused request presented. */
  apiKeyId: string | null;
  requestId: string;
  method: string;
  /** The template, `/api/v1/donors/{id}`. */
  route: string;
  status: number;
  objectType: string | null;
  objectId: string | null;
  dryRun: boolean;
  replayed: boolean;
  ip: string | null;
}

/**
 * Audit rows, buffered and inserted a batch at a time (one statement per `flushMs` or per
 * `batchSize` rows), so that a request pays for a push onto an array and nothing else: writing
 * the log must not slow a write by more than 10% (trust.md §3; bench:audit). Rows are readable
 * within `flushMs` plus one insert. The cost: rows still in the buffer when a process dies are
 * lost (a stop flushes them).
 */
export class AuditLog {
  private buffer: AuditEntry[] = [];
  private readonly timer: NodeJS.Timeout;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly pool: DatabasePool,
    private readonly logger: Logger,
    private readonly flushMs = 1_000,
    private readonly batchSize = 500,
  ) {
    this.timer = setInterval(() => void this.flush(), flushMs);
    this.timer.unref();
  }

  record(entry: AuditEntry): void {
    this.buffer.push(entry);
    if (this.buffer.length >= this.batchSize) void this.flush();
  }

  /** Inserts what is buffered; batches go one after another. */
  flush(): Promise<void> {
    if (this.buffer.length === 0) return this.flushing;
    const batch = this.buffer;
    this.buffer = [];
    this.flushing = this.flushing.then(() => this.insert(batch));
    return this.flushing;
  }

  private async insert(batch: AuditEntry[]): Promise<void> {
    try {
      // A refused key's institution is the institution of the key id it presented; a request
      // naming no known key names no institution, and has nobody to show its row to.
      await this.pool.query(sql.unsafe`
        INSERT INTO audit_events (institution_id, occurred_at, api_key_id, request_id, method,
                                  route, status, object_type, object_id, dry_run, replayed, ip)
        SELECT coalesce(r.institution_id, k.institution_id), r.occurred_at, r.api_key_id,
               r.request_id, r.method, r.route, r.status, r.object_type, r.object_id, r.dry_run,
               r.replayed, r.ip
        FROM ${sql.unnest(
          batch.map((entry) => [
            entry.institutionId,
            entry.occurredAt.toISOString(),
            entry.apiKeyId,
            entry.requestId,
            entry.method,
            entry.route,
            entry.status,
            entry.objectType,
            entry.objectId,
            entry.dryRun,
            entry.replayed,
            entry.ip,
          ]),
          [
            'int8',
            'timestamptz',
            'text',
            'text',
            'text',
            'text',
            'int2',
            'text',
            'text',
            'bool',
            'bool',
            'inet',
          ],
        )} AS r (institution_id, occurred_at, api_key_id, request_id, method, route, status,
                 object_type, object_id, dry_run, replayed, ip)
        LEFT JOIN api_keys k ON r.institution_id IS NULL AND k.id = r.api_key_id
        WHERE coalesce(r.institution_id, k.institution_id) IS NOT NULL`);
    } catch (error) {
      this.logger.error({ err: error, rows: batch.length }, 'audit rows could not be written');
    }
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}

/** Deletes audit rows older than AUDIT_RETENTION_DAYS, in batches; returns how many went. */
export async function pruneAudit(
  pool: DatabasePool,
  retentionDays: number,
  batchSize = 5_000,
): Promise<number> {
  let total = 0;
  for (;;) {
    const result = await pool.query(sql.unsafe`
      DELETE FROM audit_events
      WHERE (institution_id, id) IN (
        SELECT institution_id, id FROM audit_events
        WHERE occurred_at < now() - make_interval(days => ${retentionDays})
        LIMIT ${batchSize})`);
    total += result.rowCount;
    if (result.rowCount < batchSize) return total;
  }
}
