/**
 * The compose stack, checked the way one can without Docker or docker-compose: docker-compose.yml,
 * its variables interpolated as Compose does with none of them set, must be valid against the
 * Compose specification's JSON schema (as shipped in the npm package dclint), name only services
 * and volumes it declares, and describe the stack the README promises. The health check commands
 * are run for real against a test service, and the Dockerfile is read for the image rules
 * (official Node 24, production install, non-root).
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import ajv from 'ajv';
import { parse } from 'yaml';
import { loadConfig } from '../common/config.js';
import { startTestService, type TestService } from './helpers/harness.js';
import { freePort } from './helpers/processes.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const run = promisify(execFile);

interface ComposeService {
  image?: string;
  build?: string | { context: string };
  command?: string[];
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
  ports?: string[];
  volumes?: string[];
}

interface ComposeFile {
  services: Record<string, ComposeService>;
  volumes?: Record<string, unknown>;
}

/**
 * Compose's interpolation of the forms this file uses: ${NAME}, ${NAME:-default} (the default
 * when NAME is unset or empty), ${NAME-default} (when unset) and $$ for a $. Any other $ throws,
 * so that a form added to the file is noticed here instead of passing through unread.
 */
function interpolate(value: string, env: Record<string, string | undefined>): string {
  return value.replace(
    /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?-)([^}]*))?\}|\$/g,
    (match, name: string | undefined, operator: string | undefined, fallback: string) => {
      if (match === '$$') return '$';
      if (name === undefined)
        throw new Error(`unsupported interpolation in ${JSON.stringify(value)}`);
      const set = env[name];
      if (operator === ':-') return set ? set : fallback;
      if (operator === '-') return set ?? fallback;
      return set ?? '';
    },
  );
}

function interpolateAll(node: unknown, env: Record<string, string | undefined>): unknown {
  if (typeof node === 'string') return interpolate(node, env);
  if (Array.isArray(node)) return node.map((item) => interpolateAll(item, env));
  if (node !== null && typeof node === 'object') {
    return Object.fromEntries(
      Object.entries(node).map(([key, value]) => [key, interpolateAll(value, env)]),
    );
  }
  return node;
}

const schemaFile = path.join(
  path.dirname(createRequire(import.meta.url).resolve('dclint/package.json')),
  'schemas',
  'compose.schema.json',
);
const schema = JSON.parse(readFileSync(schemaFile, 'utf8')) as Record<string, unknown>;
// Its $schema names draft-07 by an address that Ajv does not know, though draft-07 is Ajv's own
// default; strict off because the schema is written for the specification, not for Ajv's extra
// checks on schemas (union types and the like).
delete schema.$schema;
const validateSchema = new ajv.default({ allErrors: true, strict: false }).compile(schema);

/** What docker-compose would refuse in the file: schema errors, then names it does not declare. */
function composeProblems(document: unknown): string[] {
  if (!validateSchema(document)) {
    return (validateSchema.errors ?? []).map(
      (error) =>
        `${error.instancePath || '/'} ${error.message ?? ''} ${JSON.stringify(error.params)}`,
    );
  }
  const { services, volumes = {} } = document as ComposeFile;
  const problems: string[] = [];
  for (const [name, service] of Object.entries(services)) {
    for (const needed of Object.keys(service.depends_on ?? {})) {
      if (!(needed in services)) problems.push(`${name} depends on ${needed}, which is no service`);
    }
    for (const volume of service.volumes ?? []) {
      const source = volume.split(':')[0]!;
      const named = !source.startsWith('.') && !source.startsWith('/') && !source.startsWith('~');
      if (named && !(source in volumes))
        problems.push(`${name} mounts undeclared volume ${source}`);
    }
  }
  return problems;
}

/** docker-compose.yml as Compose reads it: YAML merge keys, then the variables interpolated. */
function readComposeFile(env: Record<string, string | undefined>): unknown {
  const text = readFileSync(path.join(root, 'docker-compose.yml'), 'utf8');
  return interpolateAll(parse(text, { merge: true }), env);
}

// Variables the file reads from the environment are left unset, as on a fresh checkout.
const composeFile = readComposeFile({});
let services: Record<string, ComposeService>;
let service: TestService;
let workerMetricsPort: number;

beforeAll(async () => {
  services = (composeFile as ComposeFile).services;
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

test('the file is valid Compose, naming only what it declares, with the five services of the stack', () => {
  expect(composeProblems(composeFile)).toEqual([]);
  expect(Object.keys(services).sort()).toEqual(['api', 'migrate', 'postgres', 'redis', 'worker']);
});

test('the check refuses what Compose refuses: an unknown key, a wrong type, an undeclared name', () => {
  const broken = (change: (file: ComposeFile) => void): string[] => {
    const copy = structuredClone(composeFile) as ComposeFile;
    change(copy);
    return composeProblems(copy);
  };
  expect(
    broken((file) => {
      (file.services.api as Record<string, unknown>).depend_on = file.services.api!.depends_on;
    }),
  ).toEqual([expect.stringContaining('"additionalProperty":"depend_on"')]);
  expect(
    broken((file) => {
      (file.services.redis!.healthcheck as Record<string, unknown>).test = 42;
    }),
  ).toContainEqual(expect.stringMatching(/^\/services\/redis\/healthcheck\/test /));
  expect(
    broken((file) => {
      file.services.worker!.depends_on = { migrations: { condition: 'service_healthy' } };
    }),
  ).toEqual(['worker depends on migrations, which is no service']);
  expect(
    broken((file) => {
      delete file.volumes!['redis-data'];
    }),
  ).toEqual(['redis mounts undeclared volume redis-data']);
});

test('variables are interpolated as Compose does, and a form it would not read here is refused', () => {
  expect(interpolate('${A:-x}|${A-y}|${A}|$$HOME', {})).toBe('x|y||$HOME');
  expect(interpolate('${A:-x}|${A-y}|${A}', { A: '' })).toBe('x||');
  expect(interpolate('${A:-x}', { A: 'set' })).toBe('set');
  expect(() => interpolate('$HOME', {})).toThrow(/unsupported interpolation/);
  expect(() => interpolate('${A:?required}', {})).toThrow(/unsupported interpolation/);
  expect(svc('api').environment?.ADMIN_TOKEN).toBe('');
  expect(
    (readComposeFile({ CURSOR_SECRET: 'x'.repeat(40) }) as ComposeFile).services.api!.environment
      ?.CURSOR_SECRET,
  ).toBe('x'.repeat(40));
});

test('on a fresh checkout API and worker start in development mode; production needs its tokens and secrets key, set through the environment', () => {
  for (const name of ['api', 'worker']) {
    const env = (vars: Record<string, string>) =>
      (readComposeFile(vars) as ComposeFile).services[name]!.environment ?? {};
    const fresh = loadConfig(env({}));
    expect(fresh.NODE_ENV).toBe('development');
    expect(fresh.SECRETS_KEY).toBeUndefined();
    const production = { NODE_ENV: 'production', CURSOR_SECRET: 'x'.repeat(40) };
    expect(() => loadConfig(env(production))).toThrow(
      /^Invalid configuration: NODE_ENV=production needs METRICS_TOKEN, ADMIN_TOKEN, SECRETS_KEY /,
    );
    const complete = {
      ...production,
      SECRETS_KEY: 'ab'.repeat(32),
      METRICS_TOKEN: 'm'.repeat(32),
      ADMIN_TOKEN: 'a'.repeat(32),
    };
    expect(loadConfig(env(complete))).toMatchObject({
      NODE_ENV: 'production',
      SECRETS_KEY: complete.SECRETS_KEY,
      METRICS_TOKEN: complete.METRICS_TOKEN,
      ADMIN_TOKEN: complete.ADMIN_TOKEN,
    });
  }
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
    const build = compose.build;
    expect(path.resolve(root, typeof build === 'string' ? build : (build?.context ?? ''))).toBe(
      root,
    );
    expect(compose.command?.join(' ')).toBe(command);
    expect(compose.environment?.DATABASE_URL).toMatch(/^postgres:\/\/[^@]+@postgres:5432\//);
    expect(compose.environment?.REDIS_URL).toBe('redis://redis:6379');
    expect(compose.environment?.CURSOR_SECRET?.length).toBeGreaterThanOrEqual(32);
  }
  expect(svc('api').ports).toEqual(['3000:3000']);
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
