import pg from 'pg';

/** Drops the databases this run created, and nothing else. */
export default async function globalTeardown() {
  const url = process.env.TEST_DATABASE_URL;
  const runId = process.env.TEST_RUN_ID;
  if (url && runId) {
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      const { rows } = await admin.query('SELECT datname FROM pg_database WHERE datname LIKE $1', [
        `dgs_test_${runId}_%`,
      ]);
      for (const { datname } of rows)
        await admin.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`);
    } finally {
      await admin.end();
    }
  }
  await globalThis.__stopServices?.();
}
