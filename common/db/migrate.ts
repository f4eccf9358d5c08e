import { runner } from 'node-pg-migrate';
import pg from 'pg';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
/** Migrations live at the repository root, both for sources and for the compiled build. */
export const migrationsDir = path.resolve(
  here,
  here.includes(`${path.sep}dist${path.sep}`) ? '../../../migrations' : '../../migrations',
);

export async function migrateUp(databaseUrl: string, log: (message: string) => void = () => {}) {
  // node-pg-migrate listens for no notices on a connection of its own, so what a migration tells
  // the operator (RAISE NOTICE: the records base-amounts left without a rate) would be lost.
  const client = new pg.Client({ connectionString: databaseUrl });
  client.on('notice', (notice) => log(`NOTICE: ${notice.message ?? ''}`));
  await client.connect();
  try {
    const applied = await runner({
      dbClient: client,
      dir: migrationsDir,
      direction: 'up',
      migrationsTable: 'pgmigrations',
      checkOrder: true,
      singleTransaction: true,
      log,
    });
    return applied.map((migration) => migration.name);
  } finally {
    await client.end();
  }
}
