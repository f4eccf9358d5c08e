import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { sql, type DatabasePool } from 'slonik';
import { startApi, type RunningApi } from '../../api/server.js';
import { loadConfig, type Config } from '../../common/config.js';
import { createDatabasePool } from '../../common/db/pool.js';
import { createInstitution } from '../../common/institutions.js';
import { createLogger, type Logger } from '../../common/logger.js';
import { createRedis, deleteMatching, redisTargetOf, type Redis } from '../../common/redis.js';
import { startWorker, type RunningWorker } from '../../worker/worker.js';
import { expectDocumented } from './contract.js';

export interface ApiResponse<T = Record<string, unknown>> {
  status: number;
  headers: Headers;
  body: T;
}

export interface CallOptions {
  key?: string | null;
  body?: unknown;
  /** Sent as-is instead of JSON.stringify(body). */
  rawBody?: string;
  headers?: Record<string, string>;
}

export interface Tenant {
  institutionId: number;
  apiKeyId: string;
  key: string;
}

export interface TestService {
  config: Config;
  url: string;
  /** Direct database access for assertions on what was (or was not) written. */
  db: DatabasePool;
  redis: Redis;
  api: RunningApi;
  workers: RunningWorker[];
  tenant: Tenant;
  createTenant(name?: string, currency?: string): Promise<Tenant>;
  call<T = Record<string, unknown>>(
    method: string,
    path: string,
    options?: CallOptions,
  ): Promise<ApiResponse<T>>;
  startWorker(): Promise<RunningWorker>;
  /** Counts rows of a table (optionally for one institution). */
  count(table: string, institutionId?: number): Promise<number>;
  close(): Promise<void>;
}

/** The same server, another database. */
function databaseUrlFor(baseUrl: string, database: string): string {
  const url = new URL(baseUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

/** Longer than any answer the service gives (its write timeout and statement timeouts). */
const CALL_TIMEOUT_MS = 60_000;

const env = (name: string) => {
  const value = process.env[name];
  if (!value)
    throw new Error(`${name} is not set: run the tests through jest (globalSetup provides it)`);
  return value;
};

/**
 * A new database: `url` reaches it directly, `serviceUrl` the way the service does (the same,
 * unless the suite runs through a pooler: see globalSetup.js).
 */
async function createDatabase(): Promise<{ name: string; url: string; serviceUrl: string }> {
  const baseUrl = env('TEST_DATABASE_URL');
  const name = `dgs_test_${env('TEST_RUN_ID')}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: baseUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name} TEMPLATE ${env('TEST_TEMPLATE_DATABASE')}`);
  } finally {
    await admin.end();
  }
  return {
    name,
    url: databaseUrlFor(baseUrl, name),
    serviceUrl: databaseUrlFor(process.env.TEST_SERVICE_DATABASE_URL ?? baseUrl, name),
  };
}

async function dropDatabase(name: string): Promise<void> {
  const admin = new pg.Client({ connectionString: env('TEST_DATABASE_URL') });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}

/** Deletes only the keys under this test file's own prefix (on every master of a cluster). */
async function deletePrefix(redis: Redis, prefix: string): Promise<void> {
  await deleteMatching(redis, `${prefix}:*`);
}

/**
 * A test file's own service: a fresh database cloned from the migrated template, its own queue
 * prefix in Redis, the real API on port 0 and a real BullMQ worker, and one institution.
 */
export interface ServiceOptions {
  /** Lets a test route the service's database connections, e.g. through a TcpProxy. */
  serviceDatabaseUrl?: (url: string) => string;
  /** The API's and the worker's logger, for a test that reads what they log. */
  logger?: Logger;
}

export async function startTestService(
  overrides: Partial<Record<string, string>> = {},
  options: ServiceOptions = {},
): Promise<TestService> {
  const database = await createDatabase();
  const config = loadConfig({
    PORT: '0',
    DATABASE_URL: options.serviceDatabaseUrl?.(database.serviceUrl) ?? database.serviceUrl,
    DATABASE_MIGRATION_URL: database.url,
    REDIS_URL: env('TEST_REDIS_URL'),
    // A cluster pass (.ci/redis-cluster.sh) sets these; a test that gives a REDIS_URL of its own
    // (a private server to break) keeps it.
    REDIS_CLUSTER_NODES: overrides.REDIS_URL ? '' : (process.env.REDIS_CLUSTER_NODES ?? ''),
    WRITE_QUEUE_SHARDS: process.env.WRITE_QUEUE_SHARDS ?? '1',
    // The pass through PgBouncer 1.18 (.ci/run) turns prepared statements off.
    DATABASE_PREPARED_STATEMENTS: process.env.DATABASE_PREPARED_STATEMENTS ?? 'true',
    CURSOR_SECRET: randomBytes(32).toString('hex'),
    QUEUE_PREFIX: `dgs-test-${randomBytes(6).toString('hex')}`,
    // CI (.ci/run) keeps the services' errors in a file it shows when a test fails.
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? (process.env.TEST_ERROR_LOG ? 'error' : 'silent'),
    WORKER_CONCURRENCY: '8',
    DATABASE_POOL_SIZE: '10',
    // Tests fire bursts from one key; the limiter still runs, at a ceiling they never reach.
    RATE_LIMIT_PER_SECOND: '100000',
    ...overrides,
  });
  const logger = options.logger ?? createLogger(config.LOG_LEVEL, process.env.TEST_ERROR_LOG || 1);
  const db = await createDatabasePool(database.url, {
    maxPoolSize: 5,
    applicationName: 'dgs-test',
  });
  const redis = createRedis(redisTargetOf(config), 'blocking');
  const api = await startApi(config, logger);
  const workers = [await startWorker(config, logger)];

  const createTenant = async (name = 'Test University', currency = 'USD'): Promise<Tenant> => {
    const created = await createInstitution(db, name, currency);
    return {
      institutionId: created.institution.id,
      apiKeyId: created.apiKey.id,
      key: created.apiKey.key,
    };
  };
  const tenant = await createTenant();

  const service: TestService = {
    config,
    url: api.url,
    db,
    redis,
    api,
    workers,
    tenant,
    createTenant,
    async call<T>(
      method: string,
      path: string,
      options: CallOptions = {},
    ): Promise<ApiResponse<T>> {
      const headers: Record<string, string> = { ...options.headers };
      const key = options.key === undefined ? tenant.key : options.key;
      if (key !== null) headers['X-Service-API-Key'] = key;
      let body: string | undefined = options.rawBody;
      if (body === undefined && options.body !== undefined) {
        body = JSON.stringify(options.body);
        headers['Content-Type'] ??= 'application/json';
      }
      // A request the service never answers fails here, named, rather than as a test's timeout.
      const response = await fetch(`${api.url}${path}`, {
        method,
        headers,
        body,
        signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
      }).catch((error: unknown) => {
        if (error instanceof DOMException && error.name === 'TimeoutError')
          throw new Error(`${method} ${path}: no answer within ${CALL_TIMEOUT_MS / 1000} s`);
        throw error;
      });
      const text = await response.text();
      const parsed: unknown = text ? JSON.parse(text) : null;
      // The contract check (helpers/contract.ts): the response must be as the OpenAPI document says.
      expectDocumented({
        method,
        path,
        status: response.status,
        headers: response.headers,
        body: parsed,
      });
      return { status: response.status, headers: response.headers, body: parsed as T };
    },
    async startWorker() {
      const worker = await startWorker(config, logger);
      workers.push(worker);
      return worker;
    },
    async count(table, institutionId) {
      const where =
        institutionId === undefined
          ? sql.fragment``
          : sql.fragment`WHERE institution_id = ${institutionId}`;
      return Number(
        await db.oneFirst(
          sql.unsafe`SELECT count(*)::int FROM ${sql.identifier([table])} ${where}`,
        ),
      );
    },
    async close() {
      await api.close();
      await Promise.all(workers.map((worker) => worker.close()));
      await deletePrefix(redis, config.QUEUE_PREFIX);
      redis.disconnect();
      await db.end();
      await dropDatabase(database.name);
    },
  };
  return service;
}
