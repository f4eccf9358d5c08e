/**
 * The compose stack, checked the way one can without a Docker engine: `docker-compose config`
 * (Debian's docker-compose) must accept docker-compose.yml, and the resolved file must describe
 * the stack the README promises. The health check commands are run for real against a test
 * service, and the Dockerfile is read for the image rules (official Node 24, production install,
 * non-root).
 */
import { execFile, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { startTestService, type TestService } from './helpers/harness.js';
import { freePort } from './helpers/processes.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const run = promisify(execFile);

interface ComposeService {
  image?: string;
  build?: { context: string };
  command?: string[];
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
  ports?: { target: number; published: number | string }[];
}

let services: Record<string, ComposeService>;
let service: TestService;
let workerMetricsPort: number;

beforeAll(async () => {
  const found = spawnSync('docker-compose', ['version'], { encoding: 'utf8' });
  if (found.error) {
    throw new Error(
      'docker-compose is missing: this test checks docker-compose.yml with `docker-compose config`. ' +
        'Install it with `apt-get install -y docker-compose` (.ci/run does this on CI).',
    );
  }
  // Variables the file reads from the environment are left unset, as on a fresh checkout.
  const env = { ...process.env };
  for (const name of ['CURSOR_SECRET', 'ADMIN_TOKEN']) delete env[name];
  const { stdout } = await run('docker-compose', ['-f', 'docker-compose.yml', 'config'], {
    cwd: root,
    env,
  });
  services = (parse(stdout) as { services: Record<string, ComposeService> }).services;

  workerMetricsPort = await freePort();
  service = await startTestService({ WORKER_METRICS_PORT: String(workerMetricsPort) });
});
afterAll(async () => {
  await service?.close();
});

const svc = (name: string): ComposeService => {
  const found = services[name];
  if (!found) throw new Error(`docker-compose.yml has no service ${name}`);
  return found;
};

test('docker-compose config accepts the file, with the five services of the stack', () => {
  expect(Object.keys(services).sort()).toEqual(['api', 'migrate', 'postgres', 'redis', 'worker']);
});

test('Redis keeps every job: append-only file on, and no eviction when memory is full', () => {
  const command = svc('redis').command ?? [];
  const option = (name: string) => command[command.indexOf(name) + 1];
  expect(command).toContain('--appendonly');
  expect(option('--appendonly')).toBe('yes');
  expect(option('--maxmemory-policy')).toBe('noeviction');
});

test.each(['postgres', 'redis', 'api', 'worker'])('%s has a health check', (name) => {
  expect(svc(name).healthcheck?.test.length).toBeGreaterThan(1);
});

test('migrations run once Postgres is healthy; API and worker start after they succeed', () => {
  expect(svc('migrate').depends_on).toEqual({ postgres: { condition: 'service_healthy' } });
  for (const name of ['api', 'worker']) {
    expect(svc(name).depends_on).toEqual({
      migrate: { condition: 'service_completed_successfully' },
      redis: { condition: 'service_healthy' },
    });
  }
});

test('migrate, api and worker are built from this repository and run the Procfile commands', () => {
  const procfile = Object.fromEntries(
    readFileSync(path.join(root, 'Procfile'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1).trim()]),
  );
  const expected = { migrate: procfile.release, api: procfile.web, worker: procfile.worker };
  for (const [name, command] of Object.entries(expected)) {
    const compose = svc(name);
    expect(compose.build?.context).toBe(root);
    expect(compose.command?.join(' ')).toBe(command);
    expect(compose.environment?.DATABASE_URL).toMatch(/^postgres:\/\/[^@]+@postgres:5432\//);
    expect(compose.environment?.REDIS_URL).toBe('redis://redis:6379');
    expect(compose.environment?.CURSOR_SECRET?.length).toBeGreaterThanOrEqual(32);
  }
  expect(svc('api').ports).toEqual([{ target: 3000, published: 3000 }]);
  expect(svc('api').environment?.PORT).toBe('3000');
});

/** Runs a compose health check (["CMD", program, ...args]) with its address moved to `port`. */
async function healthCheck(check: string[], fromPort: number, toPort: number): Promise<number> {
  const [kind, program, ...args] = check;
  expect(kind).toBe('CMD');
  expect(program).toBe('node');
  const moved = args.map((arg) => arg.replaceAll(`:${fromPort}/`, `:${toPort}/`));
  expect(moved).not.toEqual(args);
  try {
    await run(process.execPath, moved, { timeout: 10_000 });
    return 0;
  } catch (error) {
    return (error as { code?: number }).code ?? -1;
  }
}

test("the API's health check passes against a ready API and fails where nothing listens", async () => {
  const check = svc('api').healthcheck!.test;
  const port = Number(new URL(service.url).port);
  expect(await healthCheck(check, 3000, port)).toBe(0);
  expect(await healthCheck(check, 3000, await freePort())).toBe(1);
});

test("the worker's health check passes against a running worker's metrics port", async () => {
  const compose = svc('worker');
  const port = Number(compose.environment?.WORKER_METRICS_PORT);
  expect(port).toBeGreaterThan(0);
  expect(await healthCheck(compose.healthcheck!.test, port, workerMetricsPort)).toBe(0);
  expect(await healthCheck(compose.healthcheck!.test, port, await freePort())).toBe(1);
});

test('the Dockerfile builds on the official Node 24 image, installs production packages only and runs as a non-root user', () => {
  const dockerfile = readFileSync(path.join(root, 'Dockerfile'), 'utf8');
  const stages = dockerfile.split(/^FROM /m).slice(1);
  expect(stages.length).toBeGreaterThanOrEqual(1);
  for (const stage of stages) expect(stage).toMatch(/^node:24[\w.-]*/);
  const runtime = stages.at(-1)!;
  const instructions = runtime
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'));
  expect(instructions.some((line) => /^RUN .*npm install .*--omit=dev/.test(line))).toBe(true);
  // `npm ci` refuses this lockfile (see .ci/run).
  expect(dockerfile).not.toMatch(/npm ci\b/);
  const user = instructions.filter((line) => line.startsWith('USER ')).at(-1);
  expect(user).toBeDefined();
  expect(user).not.toMatch(/^USER (root|0)(:|$)/);
  expect(instructions.at(-1)).toMatch(/^CMD /);
  expect(existsSync(path.join(root, '.dockerignore'))).toBe(true);
});
