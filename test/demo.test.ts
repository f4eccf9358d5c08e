/**
 * `npm run demo` as a newcomer meets it: the compiled demo (dist/cli/demo.js, built by `npm test`)
 * runs on a database of this test's own, prints an API key and three curl commands, and those
 * commands work exactly as printed. SIGTERM stops it.
 */
import { execFile, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import pg from 'pg';
import { createRedis } from '../common/redis.js';
import { killProcess, spawnEntry, type ServiceProcess } from './helpers/processes.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const run = promisify(execFile);
const hasCurl = !spawnSync('curl', ['--version']).error;

const env = (name: string) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run the tests through jest`);
  return value;
};

const suffix = randomBytes(4).toString('hex');
const database = `dgs_test_${env('TEST_RUN_ID')}_demo_${suffix}`;
const queuePrefix = `dgs-test-demo-${suffix}`;
const serverUrl = env('TEST_DATABASE_URL');
const urlOf = (name: string) => {
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
};

const demoEnv = (name = database): Record<string, string> => ({
  PATH: process.env.PATH ?? '',
  DATABASE_URL: serverUrl,
  DEMO_DATABASE_URL: urlOf(name),
  REDIS_URL: env('TEST_REDIS_URL'),
  QUEUE_PREFIX: queuePrefix,
  PORT: '0',
});

/** Starts the demo and waits for its last line; everything it printed is in `stdout`. */
async function startDemo(name = database): Promise<ServiceProcess> {
  const demo = spawnEntry('cli/demo.js', demoEnv(name));
  const deadline = Date.now() + 30_000;
  while (!demo.stdout.some((line) => line.startsWith('Stop with'))) {
    if (Date.now() > deadline || demo.child.exitCode !== null) {
      demo.child.kill('SIGKILL');
      throw new Error(
        `the demo did not get ready. stdout:\n${demo.stdout.join('\n')}\nstderr:\n${demo.stderr.join('\n')}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return demo;
}

async function query<T extends pg.QueryResultRow>(
  name: string,
  text: string,
  values: unknown[] = [],
): Promise<T[]> {
  const client = new pg.Client({ connectionString: urlOf(name) });
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end();
  }
}

const dropDatabase = (name: string) =>
  query('postgres', `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined);

/** Splits a shell command line: words, 'single quoted' parts (with '\'' for a quote), \x. */
function shellWords(command: string): string[] {
  const words: string[] = [];
  let word: string | null = null;
  for (let i = 0; i < command.length; i += 1) {
    const char = command[i]!;
    if (char === "'") {
      const end = command.indexOf("'", i + 1);
      if (end === -1) throw new Error(`unterminated quote in: ${command}`);
      word = (word ?? '') + command.slice(i + 1, end);
      i = end;
    } else if (char === '\\') {
      word = (word ?? '') + (command[i + 1] ?? '');
      i += 1;
    } else if (char === ' ') {
      if (word !== null) words.push(word);
      word = null;
    } else {
      word = (word ?? '') + char;
    }
  }
  if (word !== null) words.push(word);
  return words;
}

interface CurlRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string | undefined;
  include: boolean;
}

function parseCurl(command: string): CurlRequest {
  const [program, ...args] = shellWords(command);
  expect(program).toBe('curl');
  const request: CurlRequest = {
    method: 'GET',
    url: '',
    headers: {},
    body: undefined,
    include: false,
  };
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i]!;
    if (arg === '-X') request.method = args[++i]!;
    else if (arg === '-H') {
      const header = args[++i]!;
      const colon = header.indexOf(':');
      request.headers[header.slice(0, colon).trim().toLowerCase()] = header.slice(colon + 1).trim();
    } else if (arg === '-d') request.body = args[++i]!;
    else if (arg === '-i') request.include = true;
    else if (arg === '-sS') continue;
    else if (arg.startsWith('-')) throw new Error(`unexpected curl option ${arg} in: ${command}`);
    else request.url = arg;
  }
  if (request.body !== undefined && request.method === 'GET') request.method = 'POST';
  return request;
}

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

/** Runs a printed command: with curl in a shell when there is one, else the same call by fetch. */
async function execute(command: string): Promise<Answer> {
  const request = parseCurl(command);
  if (!hasCurl) {
    const response = await fetch(request.url, {
      method: request.method,
      headers: request.headers,
      body: request.body,
    });
    return {
      status: response.status,
      headers: Object.fromEntries(response.headers),
      body: (await response.json()) as Record<string, unknown>,
    };
  }
  // curl prints the status line and headers only with -i; add -w for the status otherwise.
  const { stdout } = await run('sh', [
    '-c',
    request.include ? command : `${command} -w '\\n%{http_code}'`,
  ]);
  if (request.include) {
    const [head, ...rest] = stdout.split('\r\n\r\n');
    const [statusLine, ...headerLines] = head!.split('\r\n');
    const headers = Object.fromEntries(
      headerLines.map((line) => [
        line.slice(0, line.indexOf(':')).toLowerCase(),
        line.slice(line.indexOf(':') + 1).trim(),
      ]),
    );
    return {
      status: Number(statusLine!.split(' ')[1]),
      headers,
      body: JSON.parse(rest.join('\r\n\r\n')) as Record<string, unknown>,
    };
  }
  const newline = stdout.lastIndexOf('\n');
  return {
    status: Number(stdout.slice(newline + 1)),
    headers: {},
    body: JSON.parse(stdout.slice(0, newline)) as Record<string, unknown>,
  };
}

let demo: ServiceProcess;
let commands: string[];
let apiKey: string;
let apiUrl: string;

beforeAll(async () => {
  demo = await startDemo();
  commands = demo.stdout.filter((line) => line.startsWith('curl '));
  apiKey = /API key\s+(\S+)/.exec(demo.stdout.join('\n'))?.[1] ?? '';
  apiUrl = /API\s+(http\S+)\/api\/v1/.exec(demo.stdout.join('\n'))?.[1] ?? '';
}, 40_000);

afterAll(async () => {
  if (demo) await killProcess(demo, 'SIGKILL');
  await dropDatabase(database);
  const client = createRedis(env('TEST_REDIS_URL'), 'blocking');
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${queuePrefix}:*`, 'COUNT', 1000);
    if (keys.length) await client.del(...keys);
    cursor = next;
  } while (cursor !== '0');
  client.disconnect();
});

test('the demo prints a working API key and three one-line curl commands', async () => {
  expect(apiKey).toMatch(/^dgs_key_/);
  expect(commands).toHaveLength(3);
  for (const command of commands) {
    const request = parseCurl(command);
    expect(request.url.startsWith(`${apiUrl}/api/v1/`)).toBe(true);
    expect(request.headers['x-service-api-key']).toBe(apiKey);
  }
  const response = await fetch(`${apiUrl}/api/v1/institution`, {
    headers: { 'X-Service-API-Key': apiKey },
  });
  expect(response.status).toBe(200);
  expect(await response.json()).toMatchObject({
    object: 'institution',
    name: 'Northbridge University',
  });
});

test('the demo institution holds a few hundred valid records of every kind', async () => {
  const [counts] = await query<Record<string, number>>(
    database,
    `SELECT (SELECT count(*)::int FROM institutions) AS institutions,
            (SELECT count(*)::int FROM donors) AS donors,
            (SELECT count(*)::int FROM gifts) AS gifts,
            (SELECT count(*)::int FROM funds) AS funds,
            (SELECT count(*)::int FROM users) AS users,
            (SELECT count(*)::int FROM award_cycles) AS award_cycles,
            (SELECT count(*)::int FROM scholarships) AS scholarships,
            (SELECT count(*)::int FROM students) AS students,
            (SELECT count(*)::int FROM awards) AS awards`,
  );
  expect(counts!.institutions).toBe(1);
  expect(counts!.donors).toBeGreaterThanOrEqual(100);
  expect(counts!.gifts).toBeGreaterThanOrEqual(200);
  for (const table of ['funds', 'users', 'award_cycles', 'scholarships', 'students', 'awards']) {
    expect({ table, some: counts![table]! > 1 }).toEqual({ table, some: true });
  }
  const statuses = await query<{ status: string }>(
    database,
    'SELECT DISTINCT status FROM awards ORDER BY status',
  );
  expect(statuses.map((row) => row.status)).toEqual([
    'accepted',
    'declined',
    'disbursed',
    'offered',
  ]);
  const cycles = await query<{ status: string }>(
    database,
    'SELECT status FROM award_cycles ORDER BY id',
  );
  expect(cycles.map((row) => row.status).sort()).toEqual(['closed', 'open']);
});

test('command 1 is a dry run: 201 with id 0, and no donor is written', async () => {
  const command = commands[0]!;
  expect(command).toContain('dry_run=true');
  const before = await query<{ n: number }>(database, 'SELECT count(*)::int AS n FROM donors');
  const answer = await execute(command);
  expect(answer.status).toBe(201);
  expect(answer.body).toMatchObject({ id: 0, object: 'donor' });
  const after = await query<{ n: number }>(database, 'SELECT count(*)::int AS n FROM donors');
  expect(after[0]!.n).toBe(before[0]!.n);
});

test('command 2 is an idempotent create: run twice, one gift, the second answer replayed', async () => {
  const command = commands[1]!;
  const request = parseCurl(command);
  expect(request.method).toBe('POST');
  expect(request.headers['idempotency-key']).toBeTruthy();
  const before = await query<{ n: number }>(database, 'SELECT count(*)::int AS n FROM gifts');

  const first = await execute(command);
  expect(first.status).toBe(201);
  expect(first.body).toMatchObject({ object: 'gift' });
  const second = await execute(command);
  expect(second.status).toBe(201);
  expect(second.body).toEqual(first.body);
  if (hasCurl) expect(second.headers['idempotent-replayed']).toBe('true');

  const after = await query<{ n: number }>(database, 'SELECT count(*)::int AS n FROM gifts');
  expect(after[0]!.n).toBe(before[0]!.n + 1);
});

test('command 3 is a paged list whose next_cursor leads to the next page', async () => {
  const command = commands[2]!;
  const first = await execute(command);
  expect(first.status).toBe(200);
  expect(first.body).toMatchObject({ object: 'list', has_more: true });
  const data = first.body.data as { id: number }[];
  expect(data).toHaveLength(5);

  const next = await fetch(
    `${parseCurl(command).url}&starting_after=${encodeURIComponent(String(first.body.next_cursor))}`,
    { headers: { 'X-Service-API-Key': apiKey } },
  );
  expect(next.status).toBe(200);
  const nextIds = ((await next.json()) as { data: { id: number }[] }).data.map((row) => row.id);
  expect(nextIds).toHaveLength(5);
  expect(Math.max(...nextIds)).toBeLessThan(Math.min(...data.map((row) => row.id)));
});

test('SIGTERM stops the demo cleanly; the next run replaces only a database the demo made', async () => {
  demo.child.kill('SIGTERM');
  expect(await demo.exited).toBe(0);

  // A database the demo did not make is never dropped.
  const foreign = `dgs_test_${env('TEST_RUN_ID')}_notdemo_${suffix}`;
  await query('postgres', `CREATE DATABASE ${foreign}`);
  try {
    const refused = spawnEntry('cli/demo.js', demoEnv(foreign));
    expect(await refused.exited).toBe(1);
    expect(refused.stderr.join('\n')).toContain(
      `Database ${foreign} exists and was not made by the demo`,
    );
    expect(await query(foreign, 'SELECT 1 AS one')).toEqual([{ one: 1 }]);
  } finally {
    await dropDatabase(foreign);
  }

  // The demo's own database from the run before is dropped and made anew.
  demo = await startDemo();
  const gifts = await query<{ n: number }>(
    database,
    "SELECT count(*)::int AS n FROM gifts WHERE subject = 'Annual Fund gift'",
  );
  expect(gifts[0]!.n).toBe(0);
  demo.child.kill('SIGTERM');
  expect(await demo.exited).toBe(0);
}, 40_000);

test('the repository runs the demo with `npm run demo`', () => {
  const packageJson = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  expect(packageJson.scripts.demo).toContain('dist/cli/demo.js');
});
