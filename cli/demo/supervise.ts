/**
 * The demo's processes: PostgreSQL and Redis (given by URL, or started here), the API and a
 * worker in this process, and a shutdown on SIGTERM or Ctrl+C that stops them in that order.
 */
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startApi } from '../../api/server.js';
import { ConfigError, loadConfig, type Config } from '../../common/config.js';
import { createDatabasePool } from '../../common/db/pool.js';
import { startLocalServices, type LocalServices } from '../../common/devServices/index.js';
import { createLogger } from '../../common/logger.js';
import {
  createRedis,
  deleteMatching,
  describeRedisTarget,
  redisReady,
  type RedisTarget,
} from '../../common/redis.js';
import { runUntilStopped } from '../../common/shutdown.js';
import { startWorker } from '../../worker/worker.js';
import { DemoError } from './errors.js';

/** The project directory (dist/cli/demo/ is three levels below it). */
const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/**
 * PostgreSQL and Redis for the demo: DATABASE_URL and REDIS_URL when set; otherwise an embedded
 * PostgreSQL whose data stays in `.data/postgres` (DEMO_DATA_DIR) for the next run, and a
 * redis-server of its own (see common/devServices).
 */
export function demoServices(env: NodeJS.ProcessEnv): Promise<LocalServices> {
  const dataDir = env.DEMO_DATA_DIR
    ? path.resolve(env.DEMO_DATA_DIR)
    : path.join(projectRoot, '.data');
  return startLocalServices({
    env,
    dataDir: path.join(dataDir, 'postgres'),
    displayDir: env.DEMO_DATA_DIR ? undefined : '.data/postgres',
    temporary: false,
  });
}

export function demoConfig(
  env: NodeJS.ProcessEnv,
  urls: { database: string; redis: string },
  queuePrefix: string,
): Config {
  try {
    return loadConfig({
      ...env,
      PORT: env.PORT || '3000',
      DATABASE_URL: urls.database,
      REDIS_URL: urls.redis,
      CURSOR_SECRET: env.CURSOR_SECRET || randomBytes(32).toString('hex'),
      QUEUE_PREFIX: env.QUEUE_PREFIX || queuePrefix,
      ADMIN_TOKEN: env.ADMIN_TOKEN || randomBytes(16).toString('hex'),
      LOG_LEVEL: env.LOG_LEVEL || 'warn',
    });
  } catch (error) {
    if (error instanceof ConfigError) throw new DemoError(error.message);
    throw error;
  }
}

/** Checks that Redis answers, and deletes the keys under the demo's own queue prefix. */
export async function emptyQueue(target: RedisTarget, prefix: string | null): Promise<void> {
  const redis = createRedis(target, 'request');
  const where = describeRedisTarget(target);
  try {
    let timer: NodeJS.Timeout | undefined;
    const reachable = await Promise.race([
      redisReady(redis).then(() => true),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), 5_000);
      }),
    ]);
    clearTimeout(timer);
    if (!reachable)
      throw new DemoError(`Redis does not answer at ${where}: start it or set REDIS_URL.`);
    if (prefix) await deleteMatching(redis, `${prefix}:*`);
  } finally {
    redis.disconnect();
  }
}

async function portIsFree(port: number): Promise<boolean> {
  if (port === 0) return true;
  const server = net.createServer();
  return new Promise((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, () => server.close(() => resolve(true)));
  });
}

/** The port the demo will listen on, checked before anything starts. */
export async function checkPort(env: NodeJS.ProcessEnv): Promise<void> {
  const port = Number(env.PORT || '3000');
  if (Number.isInteger(port) && port >= 0 && !(await portIsFree(port))) {
    throw new DemoError(`Port ${port} is in use: set PORT to another one (0 picks a free one).`);
  }
}

/**
 * Starts a worker and the API in this process, and a pool for the demo's own queries; SIGTERM or
 * Ctrl+C closes the API, then the worker and the pool, then `services`.
 */
export async function startStack(config: Config, services: LocalServices) {
  const logger = createLogger(config.LOG_LEVEL);
  return runUntilStopped(logger, 'demo', async () => {
    const worker = await startWorker(config, logger);
    const api = await startApi(config, logger);
    const pool = await createDatabasePool(config.DATABASE_URL, {
      maxPoolSize: 2,
      applicationName: 'dgs-demo',
    });
    return {
      api,
      pool,
      async close() {
        await api.close();
        await worker.close();
        await pool.end();
        await services.stop();
      },
    };
  });
}
