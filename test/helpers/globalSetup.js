// Plain JavaScript: Jest loads global setup outside its TypeScript transform.
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runner } from 'node-pg-migrate';
import pg from 'pg';

const migrationsDir = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../migrations',
);

/**
 * Where the tests find PostgreSQL and Redis: DATABASE_URL / REDIS_URL when set, otherwise
 * containers started with testcontainers, otherwise a clear message saying how to provide them.
 */
async function resolveServices() {
  const databaseUrl = process.env.DATABASE_URL;
  const redisUrl = process.env.REDIS_URL;
  if (databaseUrl && redisUrl) return { databaseUrl, redisUrl, stop: async () => {} };
  try {
    const { PostgreSqlContainer } = await import('@testcontainers/postgresql');
    const { RedisContainer } = await import('@testcontainers/redis');
    const [postgres, redis] = await Promise.all([
      databaseUrl ? null : new PostgreSqlContainer('postgres:16-alpine').start(),
      redisUrl ? null : new RedisContainer('redis:7-alpine').start(),
    ]);
    return {
      databaseUrl: databaseUrl ?? postgres.getConnectionUri(),
      redisUrl: redisUrl ?? redis.getConnectionUrl(),
      stop: async () => {
        await Promise.all([postgres?.stop(), redis?.stop()]);
      },
    };
  } catch (error) {
    const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
    throw new Error(
      'The tests need PostgreSQL and Redis. Set DATABASE_URL (a role that may CREATE DATABASE) and ' +
        'REDIS_URL, e.g. DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres ' +
        `REDIS_URL=redis://127.0.0.1:6379, or run a Docker engine for testcontainers (${reason}).`,
      { cause: error },
    );
  }
}

/**
 * Runs once: finds the services and builds one migrated template database; each test file then
 * clones it (CREATE DATABASE ... TEMPLATE), which takes milliseconds.
 */
export default async function globalSetup() {
  const services = await resolveServices();
  const runId = randomBytes(4).toString('hex');
  const template = `dgs_test_${runId}_template`;
  const admin = new pg.Client({ connectionString: services.databaseUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${template}`);
  } finally {
    await admin.end();
  }
  const templateUrl = new URL(services.databaseUrl);
  templateUrl.pathname = `/${template}`;
  await runner({
    databaseUrl: templateUrl.toString(),
    dir: migrationsDir,
    direction: 'up',
    migrationsTable: 'pgmigrations',
    log: () => {},
  });
  process.env.TEST_DATABASE_URL = services.databaseUrl;
  process.env.TEST_REDIS_URL = services.redisUrl;
  process.env.TEST_RUN_ID = runId;
  process.env.TEST_TEMPLATE_DATABASE = template;
  globalThis.__stopServices = services.stop;
}
