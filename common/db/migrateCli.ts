/** `npm run migrate`: applies pending migrations to DATABASE_URL (the Procfile release step). */
import { migrateUp } from './migrate.js';

const databaseUrl = process.env.DATABASE_URL;
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
