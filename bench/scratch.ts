import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { migrateUp } from '../common/db/migrate.js';

/** A throwaway database on DATABASE_URL's server, for one benchmark run. */
export async function createScratchDatabase(baseUrl: string, label: string) {
  const name = `dgs_bench_${label}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: baseUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  await migrateUp(url.toString());
  return {
    name,
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: baseUrl });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}
