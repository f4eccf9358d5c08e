/**
 * common/devServices: what the demo and the tests run on when DATABASE_URL / REDIS_URL are not
 * set. The embedded PostgreSQL runs as an unprivileged user when this is root, and a temporary
 * one leaves nothing behind; a spawned redis-server too; without redis-server (and without a
 * Docker engine) the error names what to install or set.
 */
import { existsSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { startLocalServices, ServiceError } from '../common/devServices/index.js';
import { createRedis, redisReady } from '../common/redis.js';

const tempDir = () => path.join(os.tmpdir(), `dgs-devservices-${randomBytes(4).toString('hex')}`);

test('the URLs given are used as they are, and the line says so without a password', async () => {
  const services = await startLocalServices({
    env: {
      DATABASE_URL: 'postgres://app:secret@db.example:5432/postgres',
      REDIS_URL: 'redis://cache.example:6379',
    },
    dataDir: tempDir(),
    temporary: true,
  });
  expect(services.databaseUrl).toBe('postgres://app:secret@db.example:5432/postgres');
  expect(services.summary).toBe(
    'PostgreSQL: DATABASE_URL postgres://app:***@db.example:5432/postgres; Redis: REDIS_URL redis://cache.example:6379',
  );
  await services.stop();
});

test('a temporary embedded PostgreSQL and a spawned redis-server work, and leave nothing behind', async () => {
  const dataDir = tempDir();
  const services = await startLocalServices({
    env: { PATH: process.env.PATH },
    dataDir,
    temporary: true,
  });
  try {
    expect(services.postgres.kind).toBe('embedded');
    expect(services.redis.kind).toBe('spawned');
    const client = new pg.Client({ connectionString: services.databaseUrl });
    await client.connect();
    try {
      const { rows } = await client.query<{ version: number; user: string }>(
        "SELECT current_setting('server_version_num')::int AS version, current_user AS user",
      );
      expect(rows[0]!.version).toBeGreaterThanOrEqual(130000);
      expect(rows[0]!.user).toBe('postgres');
    } finally {
      await client.end();
    }
    // PostgreSQL refuses to run as root: as root, the data belongs to an unprivileged user.
    const owner = (await stat(dataDir)).uid;
    if (process.getuid?.() === 0) expect(owner).not.toBe(0);
    const redis = createRedis(services.redisUrl, 'request');
    try {
      await redisReady(redis);
      expect(await redis.ping()).toBe('PONG');
    } finally {
      redis.disconnect();
    }
  } finally {
    await services.stop();
  }
  expect(existsSync(dataDir)).toBe(false);
});

test('without redis-server on the PATH or a Docker engine, the error names the package or the variable', async () => {
  const attempt = startLocalServices({
    env: { PATH: '/nonexistent', DATABASE_URL: 'postgres://127.0.0.1:1/postgres' },
    dataDir: tempDir(),
    temporary: true,
  });
  await attempt.then(
    // A Docker engine answered: a container was the choice, which is right too.
    (services) => services.stop(),
    (error: unknown) => {
      expect(error).toBeInstanceOf(ServiceError);
      expect((error as Error).message).toBe(
        'No Redis: install redis-server (apt install redis-server, or brew install redis), ' +
          'start a Docker engine, or set REDIS_URL=redis://host:6379.',
      );
    },
  );
});
