// A broken setting ends the API and the worker within 10 s with one line saying what is wrong
// and what to do, and exit code 1: no stack trace, no process that never listens, no process
// that starts and answers 500.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { SAMPLE_CURSOR_SECRET } from '../common/config.js';
import { configEnv, freePort, spawnEntry } from './helpers/processes.js';
import { startTestService, type TestService } from './helpers/harness.js';

let service: TestService;
let emptyDatabase: string;

/** The service's database URL with another database name. */
const withDatabase = (name: string) => {
  const url = new URL(service.config.DATABASE_URL);
  url.pathname = `/${name}`;
  return url.toString();
};

beforeAll(async () => {
  service = await startTestService();
  emptyDatabase = `dgs_test_empty_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${emptyDatabase}`);
  await admin.end();
});

afterAll(async () => {
  const admin = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
  await admin.connect();
  // FORCE: a pooler between the service and the server (PgBouncer) may still hold connections to it.
  await admin.query(`DROP DATABASE IF EXISTS ${emptyDatabase} WITH (FORCE)`);
  await admin.end();
  await service?.close();
});

type Case = [what: string, env: () => Promise<Record<string, string>>, line: RegExp];

const cases: Case[] = [
  [
    'PostgreSQL unreachable',
    async () => ({ DATABASE_URL: `postgres://postgres@127.0.0.1:${await freePort()}/postgres` }),
    /^PostgreSQL at 127\.0\.0\.1:\d+ does not answer \(ECONNREFUSED\): start it, or set DATABASE_URL/,
  ],
  [
    'the database missing',
    async () => ({ DATABASE_URL: withDatabase('dgs_no_such_database') }),
    /has no database "dgs_no_such_database": create it .*then run `npm run migrate`/,
  ],
  [
    'the database not migrated',
    async () => ({ DATABASE_URL: withDatabase(emptyDatabase) }),
    /is not migrated \(\d+ migrations pending, from 1732200000000_initial-schema\): run `npm run migrate`/,
  ],
  [
    'Redis unreachable',
    async () => ({ REDIS_URL: `redis://127.0.0.1:${await freePort()}` }),
    /^Redis at 127\.0\.0\.1:\d+ does not answer .*: start it, or set REDIS_URL/,
  ],
  [
    'REDIS_URL without a scheme',
    async () => ({ REDIS_URL: '127.0.0.1:6379' }),
    /^Invalid configuration: REDIS_URL /,
  ],
  [
    'a Redis Cluster unreachable',
    async () => ({ REDIS_CLUSTER_NODES: `127.0.0.1:${await freePort()}` }),
    /^Redis at cluster 127\.0\.0\.1:\d+ does not answer .*: start it, or set REDIS_CLUSTER_NODES/,
  ],
  [
    'REDIS_CLUSTER_NODES as a URL',
    async () => ({ REDIS_CLUSTER_NODES: 'redis://127.0.0.1:7000' }),
    /^Invalid configuration: REDIS_CLUSTER_NODES must be host:port pairs, comma-separated$/,
  ],
  [
    'the sample CURSOR_SECRET in production',
    async () => ({ NODE_ENV: 'production', CURSOR_SECRET: SAMPLE_CURSOR_SECRET }),
    /^Invalid configuration: CURSOR_SECRET is the sample value of docker-compose\.yml/,
  ],
  [
    'production without its tokens and secrets key',
    async () => ({ NODE_ENV: 'production', METRICS_TOKEN: '', ADMIN_TOKEN: '', SECRETS_KEY: '' }),
    /^Invalid configuration: NODE_ENV=production needs METRICS_TOKEN, ADMIN_TOKEN, SECRETS_KEY /,
  ],
  [
    'production without SECRETS_KEY only',
    async () => ({
      NODE_ENV: 'production',
      METRICS_TOKEN: 'm'.repeat(32),
      ADMIN_TOKEN: 'a'.repeat(32),
      SECRETS_KEY: '',
    }),
    /^Invalid configuration: NODE_ENV=production needs SECRETS_KEY /,
  ],
  [
    'SECRETS_KEY of the wrong length',
    async () => ({ SECRETS_KEY: 'ab'.repeat(16) }),
    /^Invalid configuration: SECRETS_KEY must be 32 bytes as 64 hex characters/,
  ],
];

describe.each(['api/main.js', 'worker/main.js'])('%s', (entry) => {
  test.each(cases)('with %s: one line, exit 1, within 10 s', async (_what, env, line) => {
    const started = Date.now();
    const proc = spawnEntry(entry, configEnv(service.config, await env()));
    expect(await proc.exited).toBe(1);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(proc.stderr).toHaveLength(1);
    expect(proc.stderr[0]).toMatch(line);
    expect(proc.stdout).toEqual([]);
  });
});
