import { runner } from 'node-pg-migrate';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
/** Migrations live at the repository root, both for sources and for the compiled build. */
export const migrationsDir = path.resolve(
  here,
  here.includes(`${path.sep}dist${path.sep}`) ? '../../../migrations' : '../../migrations',
);

export async function migrateUp(databaseUrl: string, log: (message: string) => void = () => {}) {
  const applied = await runner({
    databaseUrl,
    dir: migrationsDir,
    direction: 'up',
    migrationsTable: 'pgmigrations',
    checkOrder: true,
    singleTransaction: true,
    log,
  });
  return applied.map((migration) => migration.name);
}
