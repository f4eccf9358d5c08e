import { sql, type DatabasePool } from 'slonik';
import type { Logger } from '../common/logger.js';

/**
 * Keeps each key's `last_used_at` to the minute (trust.md §2) at the cost of at most one
 * statement per key per minute and API process, sent without the request waiting for it; its
 * WHERE makes it a write only the first time in a minute, whichever process sends it, and
 * `last_used_at` changes announce nothing (migration 1735060000000), so no process forgets keys.
 */
export class LastUse {
  private readonly minutes = new Map<string, number>();

  constructor(
    private readonly pool: DatabasePool,
    private readonly logger: Logger,
    private readonly capacity = 10_000,
  ) {}

  touch(apiKeyId: string, institutionId: number, now = Date.now()): void {
    const minute = Math.floor(now / 60_000);
    if (this.minutes.get(apiKeyId) === minute) return;
    this.minutes.delete(apiKeyId);
    if (this.minutes.size >= this.capacity) {
      const oldest = this.minutes.keys().next().value;
      if (oldest !== undefined) this.minutes.delete(oldest);
    }
    this.minutes.set(apiKeyId, minute);
    this.pool
      .query(
        sql.unsafe`
          UPDATE api_keys SET last_used_at = date_trunc('minute', now())
          WHERE institution_id = ${institutionId} AND id = ${apiKeyId}
            AND (last_used_at IS NULL OR last_used_at < date_trunc('minute', now()))`,
      )
      .catch((error: unknown) => {
        // Tried again on the key's next request: a missed minute is no reason to fail one.
        this.minutes.delete(apiKeyId);
        this.logger.warn({ err: error, apiKeyId }, 'could not record an API key’s last use');
      });
  }
}
