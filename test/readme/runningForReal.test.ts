/**
 * The README's "Running it for real" blocks, run in order by bash as a reader would paste them:
 * the first (install, create the database, configure, `npm run dev`) in the background, then the
 * second (create an institution, keep its key, make a call). Only where they point is changed:
 * the database server, its database name, Redis and the port become the test's own, so the test
 * touches nothing it did not make. Runs in the serial suite (npm run test:faults): the first
 * block rebuilds dist, which no other test may be running from meanwhile.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { freePort } from '../helpers/processes.js';
import { waitFor } from '../helpers/wait.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const databaseServer = new URL(process.env.TEST_DATABASE_URL!);
const redisUrl = process.env.TEST_REDIS_URL!;
const database = `dgs_readme_${randomBytes(4).toString('hex')}`;

/** The shell blocks that follow a heading, in order. */
function shellBlocksAfter(heading: string): string[] {
  const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf(heading));
  const next = section.indexOf('\n## ', 1);
  const text = next === -1 ? section : section.slice(0, next);
  return [...text.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1]!);
}

/** The same commands, pointed at the test's servers. */
function pointedAtTest(block: string, port: number): string {
  const server = `${databaseServer.protocol}//${databaseServer.username || 'postgres'}@${databaseServer.host}`;
  return block
    .replaceAll('postgres://postgres@127.0.0.1:5432/donors', `${server}/${database}`)
    .replaceAll(
      'createdb -h 127.0.0.1 -U postgres donors',
      `createdb -h ${databaseServer.hostname} -p ${databaseServer.port || 5432} -U ${databaseServer.username || 'postgres'} ${database}`,
    )
    .replaceAll('redis://127.0.0.1:6379', redisUrl)
    .replaceAll('localhost:3000', `localhost:${port}`);
}

let server: ChildProcess | undefined;
const serverOutput: string[] = [];

afterAll(async () => {
  if (server?.pid) {
    try {
      process.kill(-server.pid, 'SIGTERM');
    } catch {
      // already gone
    }
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
  const admin = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  await admin.end();
});

test('the "Running it for real" blocks run as written and the call answers', async () => {
  const blocks = shellBlocksAfter('### Running it for real');
  expect(blocks.length).toBeGreaterThanOrEqual(2);
  const port = await freePort();
  // A reader's shell: none of the settings that point the suite's own services somewhere (CI
  // sets DATABASE_MIGRATION_URL, for one, which the blocks' `npm run dev` would migrate instead).
  const {
    DATABASE_URL: _database,
    DATABASE_MIGRATION_URL: _migrations,
    DATABASE_READ_URL: _replica,
    REDIS_URL: _redis,
    REDIS_CLUSTER_NODES: _cluster,
    WRITE_QUEUE_SHARDS: _shards,
    ...shell
  } = process.env;
  const env = {
    ...shell,
    PORT: String(port),
    QUEUE_PREFIX: `dgs-readme-${randomBytes(4).toString('hex')}`,
    LOG_LEVEL: 'warn',
  };

  server = spawn('bash', ['-c', pointedAtTest(blocks[0]!, port)], {
    cwd: root,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  for (const stream of [server.stdout, server.stderr])
    stream?.setEncoding('utf8').on('data', (chunk: string) => serverOutput.push(chunk));
  await waitFor(
    async () =>
      fetch(`http://127.0.0.1:${port}/ready`).then(
        (response) => response.status === 200,
        () => false,
      ),
    180_000,
    `the first block to serve on ${port}: ${serverOutput.join('').slice(-2_000)}`,
  );

  const call = spawnSync('bash', ['-c', pointedAtTest(blocks[1]!, port)], {
    cwd: root,
    env,
    encoding: 'utf8',
    timeout: 60_000,
  });
  expect(call.status).toBe(0);
  const answer = JSON.parse(call.stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;
  expect(answer).toMatchObject({ id: 0, object: 'donor', display_name: 'Ada Lovelace' });
}, 240_000);
