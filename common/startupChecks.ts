import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { Cluster, Redis } from 'ioredis';
import pg from 'pg';
import type { Config } from './config.js';
import { within } from './deadline.js';
import { migrationsDir } from './db/migrate.js';
import { describeRedisTarget, redisOptions, redisTargetOf, type RedisTarget } from './redis.js';

/**
 * What the API and the worker check before they start, so that a broken setting ends the process
 * within seconds with one line saying what is wrong and what to do, instead of a stack trace, a
 * process that never listens, or one that starts and answers 500.
 */
export class StartupError extends Error {}

const TIMEOUT_MS = 4_000;

/** `host:port` of a URL, for messages (never its credentials). */
const whereOf = (url: string, defaultPort: number) => {
  const parsed = new URL(url);
  return `${parsed.hostname}:${parsed.port || defaultPort}`;
};

/** The SQLSTATE or network code of a driver error. */
const codeOf = (error: unknown) => String((error as { code?: unknown } | null)?.code ?? '');

/** Which migrations the database lacks (none: it is up to date). */
async function pendingMigrations(client: pg.Client): Promise<string[]> {
  const files = (await readdir(migrationsDir))
    .filter((name) => name.endsWith('.sql'))
    .map((name) => path.basename(name, '.sql'))
    .sort();
  let applied = new Set<string>();
  try {
    const { rows } = await client.query<{ name: string }>('SELECT name FROM pgmigrations');
    applied = new Set(rows.map((row) => row.name));
  } catch (error) {
    // 42P01: no migrations table, so nothing was ever migrated.
    if (codeOf(error) !== '42P01') throw error;
  }
  return files.filter((name) => !applied.has(name));
}

async function checkPostgres(databaseUrl: string): Promise<void> {
  const where = whereOf(databaseUrl, 5432);
  const database = decodeURIComponent(new URL(databaseUrl).pathname.slice(1)) || 'postgres';
  const client = new pg.Client({
    connectionString: databaseUrl,
    connectionTimeoutMillis: TIMEOUT_MS,
    query_timeout: TIMEOUT_MS,
  });
  client.on('error', () => {});
  try {
    await client.connect();
  } catch (error) {
    const code = codeOf(error);
    // PgBouncer reports the server's refusal of a database it does not have as 08P01.
    const noDatabase =
      code === '3D000' || (code === '08P01' && /database ".*" does not exist/.test(String(error)));
    if (noDatabase)
      throw new StartupError(
        `PostgreSQL at ${where} has no database "${database}": create it (createdb ${database}), then run \`npm run migrate\`.`,
      );
    if (code === '28P01' || code === '28000')
      throw new StartupError(
        `PostgreSQL at ${where} refused the user or password in DATABASE_URL: correct DATABASE_URL.`,
      );
    throw new StartupError(
      `PostgreSQL at ${where} does not answer (${code || (error as Error).message}): start it, or set DATABASE_URL to one that runs.`,
    );
  }
  try {
    const pending = await pendingMigrations(client);
    if (pending.length)
      throw new StartupError(
        `The database "${database}" is not migrated (${pending.length} migration${pending.length === 1 ? '' : 's'} pending, from ${pending[0]}): run \`npm run migrate\`.`,
      );
  } finally {
    await client.end().catch(() => {});
  }
}

/** One server, or one node of the cluster, as the service reaches it; no retries. */
function singleConnection(target: RedisTarget): Redis {
  const options =
    typeof target === 'string'
      ? redisOptions(target, 'request')
      : { ...target.cluster[0]!, ...target.nodeOptions };
  return new Redis({
    ...options,
    connectTimeout: TIMEOUT_MS,
    maxRetriesPerRequest: 1,
    retryStrategy: () => null,
    lazyConnect: true,
  });
}

/**
 * What a refused connection most likely needs, from the error of one node: a cluster client says
 * only that no node was available.
 */
function hintFor(target: RedisTarget, error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const cluster = typeof target !== 'string';
  if (/WRONGPASS|NOAUTH|invalid username-password/i.test(message))
    return cluster
      ? 'it refused the credentials: set REDIS_CLUSTER_PASSWORD (and REDIS_CLUSTER_USERNAME for an ACL user)'
      : 'it refused the credentials: put the user and password in REDIS_URL (redis://user:password@host:port)';
  if (/certificate|self.signed|CERT_|SSL|TLS|EPROTO/i.test(message + codeOf(error)))
    return 'its TLS certificate is not trusted: add the CA that signed it with NODE_EXTRA_CA_CERTS, or check the host name';
  if (/Connection is closed|ECONNRESET|socket hang up/i.test(message + codeOf(error)))
    return cluster
      ? 'it closed the connection: if the nodes speak TLS only, set REDIS_CLUSTER_TLS=true'
      : 'it closed the connection: if it speaks TLS only, use a rediss:// URL';
  return `start it, or set ${cluster ? 'REDIS_CLUSTER_NODES' : 'REDIS_URL'} to one that runs`;
}

/**
 * Runs `attempt` on a connection; null if it succeeds, else what went wrong: the first error the
 * connection emitted (a refused connection, AUTH or TLS handshake: the command itself sees only a
 * closed socket), or the attempt's own. Disconnects either way.
 */
async function failureOf(redis: Redis | Cluster, attempt: () => Promise<void>): Promise<unknown> {
  let emitted: unknown;
  redis.on('error', (error: unknown) => (emitted ??= error));
  try {
    await attempt();
    return null;
  } catch (error) {
    return error instanceof StartupError ? error : (emitted ?? error);
  } finally {
    redis.disconnect();
  }
}

async function checkRedis(target: RedisTarget): Promise<void> {
  const where = describeRedisTarget(target);
  let failure: unknown;
  if (typeof target === 'string') {
    const redis = singleConnection(target);
    failure = await failureOf(redis, async () => {
      await redis.connect();
      await redis.ping();
    });
  } else {
    const cluster = new Cluster(target.cluster, {
      redisOptions: { ...target.nodeOptions, connectTimeout: TIMEOUT_MS, maxRetriesPerRequest: 1 },
      clusterRetryStrategy: () => null,
      lazyConnect: true,
    });
    // A cluster answers once it knows its slots; CLUSTER INFO says whether they are all served.
    failure = await failureOf(cluster, async () => {
      await cluster.connect();
      if (!/cluster_state:ok/.test(String(await cluster.cluster('INFO'))))
        throw new StartupError(
          `Redis Cluster at ${where} is not serving all its slots (cluster_state is not ok): check its masters, or set REDIS_CLUSTER_NODES to one that runs.`,
        );
    });
    // The cluster client's own error names no cause ("None of startup nodes is available"): ask
    // its first node alone for one.
    if (failure && !(failure instanceof StartupError)) {
      const node = singleConnection(target);
      failure =
        (await failureOf(node, async () => {
          await node.connect();
          await node.ping();
        })) ?? failure;
    }
  }
  if (failure === null) return;
  if (failure instanceof StartupError) throw failure;
  const reason = codeOf(failure) || (failure as Error).message;
  throw new StartupError(
    `Redis at ${where} does not answer (${reason}): ${hintFor(target, failure)}.`,
  );
}

/** Both stores answer and the database holds every migration; else a StartupError. */
export async function checkDependencies(config: Config): Promise<void> {
  await Promise.all([checkPostgres(config.DATABASE_URL), checkRedis(redisTargetOf(config))]);
}

/** Entry points call this: a failed check stops the process with its one line. */
export function checkDependenciesOrExit(config: Config): Promise<void> {
  return startOrExit(() => checkDependencies(config));
}

/** Runs a step of an entry point's start; a StartupError stops the process with its one line. */
export async function startOrExit<T>(step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    if (error instanceof StartupError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}

const READY_TIMEOUT_MS = 30_000;

/**
 * Bounds a start-up wait on Redis connections that retry for ever (BullMQ's, the reply
 * subscriber's). The checks above have just found Redis answering, so a wait this long means a
 * connection that will not recover by itself: the process ends with one line and its supervisor
 * starts it again, rather than running without ever listening or taking a job, and saying nothing.
 */
export function readyWithin<T>(
  what: string,
  ready: Promise<T>,
  timeoutMs = READY_TIMEOUT_MS,
): Promise<T> {
  return within(ready, timeoutMs, () => {
    throw new StartupError(
      `${what} not ready within ${timeoutMs / 1000} s although Redis answered the start-up check: starting again may help; if not, check the Redis logs.`,
    );
  });
}
