import type { Logger } from '../logger.js';

/**
 * SQLSTATEs of a named statement that a connection pooler lost: sent on a server connection that
 * never prepared it (26000), or prepared again on one that already had it (42P05). PgBouncer in
 * transaction mode does both before 1.21, or without max_prepared_statements.
 */
const LOST_STATEMENT_CODES = new Set(['26000', '42P05']);

const isLostStatement = (error: unknown) =>
  LOST_STATEMENT_CODES.has(String((error as { code?: unknown } | null)?.code));

/**
 * Whether this process sends its hot statements named, so that Postgres plans them once per
 * connection (DATABASE_PREPARED_STATEMENTS). On by default and safe either way: the first time a
 * named statement fails as a pooler makes it fail, the statement is sent again unnamed, and from
 * then on every statement is, with one warning saying so.
 */
export class PreparedStatements {
  constructor(
    private enabled: boolean,
    private readonly logger: Logger,
  ) {}

  /** Runs `statement` named while that works here, else unnamed. */
  async run<T>(statement: (prepared: boolean) => Promise<T>): Promise<T> {
    if (!this.enabled) return statement(false);
    try {
      return await statement(true);
    } catch (error) {
      if (!isLostStatement(error)) throw error;
      if (this.enabled) {
        this.enabled = false;
        this.logger.warn(
          { err: error },
          'prepared statements do not survive this database connection (a pooler such as PgBouncer ' +
            'before 1.21, or without max_prepared_statements): sending statements unnamed from now ' +
            'on; set DATABASE_PREPARED_STATEMENTS=false to start that way',
        );
      }
      return statement(false);
    }
  }
}
