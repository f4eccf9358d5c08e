// Plain JavaScript: Jest loads global setup outside its TypeScript transform.
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runner } from 'node-pg-migrate';
import pg from 'pg';

const migrationsDir = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../migrations',
);

/**
 * Where the tests find PostgreSQL and Redis: DATABASE_URL / REDIS_URL when set; otherwise an
 * embedded PostgreSQL in a temporary directory and a private redis-server from the PATH (or
 * testcontainers when a Docker engine answers), stopped and removed by globalTeardown. The code
 * is the demo's (common/devServices), compiled by `npm test`'s build step.
 */
async function resolveServices() {
  let devServices;
  try {
    devServices = await import('../../dist/common/devServices/index.js');
  } catch (error) {
    throw new Error('dist/ is missing or stale: run the tests with `npm test` (it builds first).', {
      cause: error,
    });
  }
  try {
    return await devServices.startLocalServices({
      dataDir: path.join(
        os.tmpdir(),
        `dgs-test-postgres-${process.pid}-${randomBytes(3).toString('hex')}`,
      ),
      temporary: true,
    });
  } catch (error) {
    if (error instanceof devServices.ServiceError) {
      // One plain line instead of a stack: what to install or set.
      process.stderr.write(`\n${error.message}\n`);
    }
    throw error;
  }
}

async function migratedTemplate(serverUrl, template) {
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${template}`);
  } finally {
    await admin.end();
  }
  const templateUrl = new URL(serverUrl);
  templateUrl.pathname = `/${template}`;
  await runner({
    databaseUrl: templateUrl.toString(),
    dir: migrationsDir,
    direction: 'up',
    migrationsTable: 'pgmigrations',
    log: () => {},
  });
}

/**
 * Runs once: finds the services and builds one migrated template database; each test file then
 * clones it (CREATE DATABASE ... TEMPLATE), which takes milliseconds.
 */
export default async function globalSetup() {
  const started = Date.now();
  const services = await resolveServices();
  process.stdout.write(
    `\nTests use ${services.summary} (ready in ${((Date.now() - started) / 1000).toFixed(1)} s)\n`,
  );
  // DATABASE_URL with DATABASE_MIGRATION_URL: the service goes through a pooler such as PgBouncer
  // (DATABASE_URL), while the tests create, migrate and drop their databases on the same server
  // directly (DATABASE_MIGRATION_URL), as an operator's migrations do.
  const direct =
    process.env.DATABASE_URL && process.env.DATABASE_MIGRATION_URL
      ? process.env.DATABASE_MIGRATION_URL
      : services.databaseUrl;
  if (direct !== services.databaseUrl)
    process.stdout.write(`The service goes through DATABASE_URL; the tests' own setup does not.\n`);
  // The harness puts every test service on this cluster instead (a test that breaks a Redis of
  // its own keeps that one).
  if (process.env.REDIS_CLUSTER_NODES)
    process.stdout.write(
      `Test services use the Redis Cluster REDIS_CLUSTER_NODES ${process.env.REDIS_CLUSTER_NODES} with WRITE_QUEUE_SHARDS=${process.env.WRITE_QUEUE_SHARDS ?? '1'}\n`,
    );
  const runId = randomBytes(4).toString('hex');
  const template = `dgs_test_${runId}_template`;
  try {
    await migratedTemplate(direct, template);
  } catch (error) {
    await services.stop();
    throw error;
  }
  process.env.TEST_DATABASE_URL = direct;
  process.env.TEST_SERVICE_DATABASE_URL = services.databaseUrl;
  process.env.TEST_REDIS_URL = services.redisUrl;
  process.env.TEST_RUN_ID = runId;
  process.env.TEST_TEMPLATE_DATABASE = template;
  globalThis.__stopServices = services.stop;
}
