/**
 * `npm install && npm run demo` on a machine with nothing but Node: no DATABASE_URL, no
 * REDIS_URL. The demo starts the embedded PostgreSQL (data in DEMO_DATA_DIR, here a temporary
 * directory instead of .data/) and a redis-server of its own, says so in one line, serves the
 * printed commands, stops both on SIGTERM, keeps its data for the next run, and leaves nothing
 * running when it is killed.
 */
import { chmod, mkdtemp, rm, stat } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { execute, printed, spawnDemo, startDemo } from './helpers/demo.js';
import { killProcess, type ServiceProcess } from './helpers/processes.js';

let dataDir: string;
let demo: ServiceProcess | undefined;

const localEnv = () => ({ PATH: process.env.PATH ?? '', PORT: '0', DEMO_DATA_DIR: dataDir });

const portAnswers = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });

/** The ports of the PostgreSQL and the Redis the demo's "Using" line names. */
function servicePorts(proc: ServiceProcess): { postgres: number; redis: number } {
  const using = proc.stdout.find((line) => line.startsWith('Using ')) ?? '';
  const match =
    /^Using PostgreSQL: embedded \S+ on 127\.0\.0\.1:(\d+) .*; Redis: redis-server \S+ spawned on 127\.0\.0\.1:(\d+)$/.exec(
      using,
    );
  if (!match) throw new Error(`unexpected "Using" line: ${using}`);
  return { postgres: Number(match[1]), redis: Number(match[2]) };
}

async function gone(port: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (await portAnswers(port)) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return true;
}

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'dgs-demo-local-'));
  // As a project directory is: others may enter it (mkdtemp makes it private). As root the
  // server runs as another user, who must reach the data directory.
  await chmod(dataDir, 0o755);
});

afterAll(async () => {
  if (demo) await killProcess(demo, 'SIGTERM');
  await new Promise((resolve) => setTimeout(resolve, 500));
  await rm(dataDir, { recursive: true, force: true });
});

test('with nothing set, the demo runs on an embedded PostgreSQL and a redis-server of its own, and its commands work', async () => {
  demo = await startDemo(localEnv(), [], 60_000);
  const ports = servicePorts(demo);
  expect(demo.stdout[0]).toMatch(/^Using PostgreSQL: embedded (1[3-9])\./);
  expect(demo.stdout[0]).toContain(`(data in ${path.join(dataDir, 'postgres')})`);
  const { commands } = printed(demo);
  expect(commands).toHaveLength(4);
  const dryRun = await execute(commands[0]!);
  expect(dryRun).toMatchObject({ status: 201, body: { id: 0, object: 'donor' } });
  const gift = await execute(commands[1]!);
  expect(gift).toMatchObject({ status: 201, body: { object: 'gift' } });
  const list = await execute(commands[2]!);
  expect(list).toMatchObject({ status: 200, body: { object: 'list', has_more: true } });

  // SIGTERM stops the API, the worker, PostgreSQL and Redis; the data stays.
  demo.child.kill('SIGTERM');
  expect(await demo.exited).toBe(0);
  expect(await gone(ports.postgres, 5_000)).toBe(true);
  expect(await gone(ports.redis, 5_000)).toBe(true);
  expect((await stat(path.join(dataDir, 'postgres', 'PG_VERSION'))).isFile()).toBe(true);

  // The next run keeps the data: the gift of command 2 is replayed, not written again.
  const started = Date.now();
  demo = await startDemo(localEnv(), [], 60_000);
  const secondStart = Date.now() - started;
  expect(demo.stdout.join('\n')).toContain('(kept from the last run; --fresh starts over)');
  const replay = await execute(printed(demo).commands[1]!);
  expect(replay.status).toBe(201);
  expect(replay.body).toEqual(gift.body);
  expect(secondStart).toBeLessThan(20_000);

  // Killed outright, the demo still leaves no server running: the reaper stops both.
  const killed = servicePorts(demo);
  await killProcess(demo, 'SIGKILL');
  expect(await gone(killed.postgres, 20_000)).toBe(true);
  expect(await gone(killed.redis, 20_000)).toBe(true);

  // And the data survives that too.
  demo = await startDemo(localEnv(), [], 60_000);
  expect(demo.stdout.join('\n')).toContain('kept from the last run');
  demo.child.kill('SIGTERM');
  expect(await demo.exited).toBe(0);
  demo = undefined;
}, 180_000);

test('an unknown argument is refused before anything starts', async () => {
  const refused = spawnDemo(localEnv(), ['--frsh']);
  expect(await refused.exited).toBe(1);
  expect(refused.stdout).toEqual([]);
});
