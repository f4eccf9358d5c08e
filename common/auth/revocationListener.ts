import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { sql, type DatabasePool } from 'slonik';
import type { Logger } from '../logger.js';

/** The channel the api_keys trigger announces every revocation on (migration 1733800000000). */
export const REVOCATION_CHANNEL = 'api_key_revoked';

/**
 * A notice the listener sends itself through the service's own database connection once LISTEN
 * has taken effect: it proves that what commits where the service writes reaches this connection.
 */
export const PROBE_CHANNEL = 'api_key_listener_probe';

const RECONNECT_DELAY_MS = 1_000;
/** How long the probe may take to arrive (NOTIFY is delivered within milliseconds). */
const PROBE_TIMEOUT_MS = 3_000;
/** A listener whose probe never arrived is misconfigured: tried again at this pace. */
const MISCONFIGURED_RETRY_MS = 30_000;

/** Sends `NOTIFY PROBE_CHANNEL, payload` where revocations commit (the service's pool). */
export type SendProbe = (payload: string) => Promise<void>;

export const probeThrough =
  (pool: DatabasePool): SendProbe =>
  async (payload) => {
    await pool.query(sql.unsafe`SELECT pg_notify(${PROBE_CHANNEL}, ${payload})`);
  };

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
 *
 * LISTEN can succeed and still hear nothing: through a transaction pooler, or on a URL that names
 * another database or server than the one the service writes to. So the listener counts as
 * listening only once a probe sent through the service's own pool has arrived; until then reads
 * ask Postgres, and a listener whose probe never arrives says what to fix and tries again every
 * 30 s.
 */
export class RevocationListener {
  private client: pg.Client | null = null;
  private retry: NodeJS.Timeout | null = null;
  private closed = false;
  private warned = false;

  private probeArrived: ((payload: string) => void) | null = null;

  constructor(
    private readonly url: string,
    private readonly events: RevocationEvents,
    private readonly logger: Logger,
    private readonly sendProbe: SendProbe,
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
      if (message.channel === PROBE_CHANNEL && message.payload)
        this.probeArrived?.(message.payload);
    });
    let heard: boolean;
    try {
      await client.connect();
      await client.query(`LISTEN ${PROBE_CHANNEL}`);
      await client.query(`LISTEN ${REVOCATION_CHANNEL}`);
      heard = await this.probe();
    } catch (error) {
      onLost(error instanceof Error ? error : new Error(String(error)));
      return;
    }
    if (this.closed || lost) {
      await client.end().catch(() => {});
      return;
    }
    if (!heard) {
      lost = true;
      void client.end().catch(() => {});
      this.logger.warn(
        'API key revocations committed where the service writes do not reach the listening connection (DATABASE_MIGRATION_URL through a transaction pooler, or to another database?): reads ask Postgres for every key; trying again in 30 s',
      );
      this.retry = setTimeout(() => void this.connect(), MISCONFIGURED_RETRY_MS);
      return;
    }
    this.client = client;
    this.warned = false;
    this.events.listening(true);
  }

  /** Whether a notice committed through the service's pool reaches this listener in time. */
  private async probe(): Promise<boolean> {
    const token = randomUUID();
    let timer: NodeJS.Timeout | undefined;
    const arrived = new Promise<boolean>((resolve) => {
      this.probeArrived = (payload) => {
        if (payload === token) resolve(true);
      };
      timer = setTimeout(() => resolve(false), PROBE_TIMEOUT_MS);
    });
    try {
      await this.sendProbe(token);
      return await arrived;
    } finally {
      clearTimeout(timer);
      this.probeArrived = null;
    }
  }
}
