import pg from 'pg';
import type { Logger } from '../logger.js';

/** The channel the api_keys trigger announces every revocation on (migration 1733800000000). */
export const REVOCATION_CHANNEL = 'api_key_revoked';

const RECONNECT_DELAY_MS = 1_000;

export interface RevocationEvents {
  /** A key changed (was revoked or deleted): whatever was confirmed about it is stale. */
  revoked(apiKeyId: string): void;
  /**
   * Whether revocations are being heard. True once LISTEN has taken effect; false the moment the
   * connection is lost, since a revocation committed while nobody listens is never announced.
   */
  listening(heard: boolean): void;
}

/**
 * Listens for revocations on a connection of its own. It needs a direct connection to
 * PostgreSQL (DATABASE_MIGRATION_URL when the service sits behind PgBouncer in transaction mode,
 * which cannot LISTEN); while it is not connected it says so and reconnects every second.
 */
export class RevocationListener {
  private client: pg.Client | null = null;
  private retry: NodeJS.Timeout | null = null;
  private closed = false;
  private warned = false;

  constructor(
    private readonly url: string,
    private readonly events: RevocationEvents,
    private readonly logger: Logger,
  ) {}

  /** Connects in the background: the API starts even while Postgres cannot be reached. */
  start(): void {
    void this.connect();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    const client = this.client;
    this.client = null;
    this.events.listening(false);
    await client?.end().catch(() => {});
  }

  private async connect(): Promise<void> {
    this.retry = null;
    if (this.closed) return;
    const client = new pg.Client({
      connectionString: this.url,
      application_name: 'dgs-api-revocations',
      keepAlive: true,
      connectionTimeoutMillis: 2_000,
    });
    let lost = false;
    const onLost = (error?: Error) => {
      if (lost) return;
      lost = true;
      if (this.client === client) this.client = null;
      this.events.listening(false);
      void client.end().catch(() => {});
      if (this.closed) return;
      // Once per outage, not once per attempt.
      if (!this.warned)
        this.logger.warn(
          { err: error },
          'not listening for API key revocations; reads ask Postgres until the connection is back',
        );
      this.warned = true;
      this.retry = setTimeout(() => void this.connect(), RECONNECT_DELAY_MS);
    };
    client.on('error', onLost);
    client.on('end', () => onLost());
    client.on('notification', (message) => {
      if (message.channel === REVOCATION_CHANNEL && message.payload)
        this.events.revoked(message.payload);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${REVOCATION_CHANNEL}`);
    } catch (error) {
      onLost(error instanceof Error ? error : new Error(String(error)));
      return;
    }
    if (this.closed || lost) {
      await client.end().catch(() => {});
      return;
    }
    this.client = client;
    this.warned = false;
    this.events.listening(true);
  }
}
