/**
 * `npm run migrate`: applies pending migrations (the Procfile release step). It connects to
 * DATABASE_MIGRATION_URL when set, else DATABASE_URL: node-pg-migrate holds a session advisory
 * lock for the whole run, which a transaction-mode pooler (PgBouncer) would hand to another
 * client's transaction, so behind a pooler this must be a direct connection.
 */
import { migrateUp } from './migrate.js';

const databaseUrl = process.env.DATABASE_MIGRATION_URL || process.env.DATABASE_URL;
if (!databaseUrl) {
  process.stderr.write('Invalid configuration: DATABASE_URL is required\n');
  process.exit(1);
}
try {
  const applied = await migrateUp(databaseUrl, (message) => process.stderr.write(`${message}\n`));
  process.stderr.write(
    applied.length ? `Applied ${applied.length} migration(s).\n` : 'Database is up to date.\n',
  );
} catch (error) {
  process.stderr.write(
    `Migration failed: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(1);
}
