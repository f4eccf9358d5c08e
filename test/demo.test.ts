/**
 * `npm run demo` as a newcomer meets it: the compiled demo (dist/cli/demo.js, built by `npm test`)
 * runs on a database of this test's own (DATABASE_URL and REDIS_URL given, as an operator runs
 * it), prints an API key and three curl commands, and those commands work exactly as printed.
 * SIGTERM stops it; the next run keeps its data, `--fresh` starts over. demo.local.test.ts runs
 * it with nothing set, on the embedded PostgreSQL and a redis-server of its own.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createRedis } from '../common/redis.js';
import {
  execute,
  hasCurl,
  parseCurl,
  shellWords,
  printed,
  spawnDemo,
  startDemo as startDemoWith,
} from './helpers/demo.js';
import { killProcess, type ServiceProcess } from './helpers/processes.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

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

const startDemo = (name = database, args: string[] = []) => startDemoWith(demoEnv(name), args);

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

let demo: ServiceProcess;
let commands: string[];
let apiKey: string;
let apiUrl: string;

beforeAll(async () => {
  demo = await startDemo();
  ({ commands, apiKey, apiUrl } = printed(demo));
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

test('the demo prints a working API key and four one-line curl commands', async () => {
  expect(apiKey).toMatch(/^dgs_key_/);
  expect(commands).toHaveLength(4);
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

test("the demo issued last year's giving statements, and its printed command fetches one as a PDF", async () => {
  const year = new Date().getUTCFullYear() - 1;
  const [run] = await query<{ status: string; donors_done: number }>(
    database,
    'SELECT status, donors_done FROM giving_statement_runs',
  );
  expect(run!.status).toBe('completed');
  expect(run!.donors_done).toBeGreaterThan(10);
  const request = parseCurl(commands[3]!);
  expect(request).toMatchObject({ method: 'GET', output: 'statement.pdf' });
  expect(request.headers.accept).toBe('application/pdf');
  const [statement] = await query<{ year: number; status: string }>(
    database,
    `SELECT year, status FROM giving_statements WHERE id = ${Number(request.url.split('/').at(-1))}`,
  );
  expect(statement).toEqual({ year, status: 'issued' });
  const directory = mkdtempSync(path.join(tmpdir(), 'dgs-demo-pdf-'));
  try {
    if (hasCurl) {
      const ran = spawnSync('sh', ['-c', commands[3]!], { cwd: directory, encoding: 'utf8' });
      expect(ran.status).toBe(0);
    } else {
      const response = await fetch(request.url, { headers: request.headers });
      expect(response.status).toBe(200);
      writeFileSync(
        path.join(directory, 'statement.pdf'),
        Buffer.from(await response.arrayBuffer()),
      );
    }
    const pdf = readFileSync(path.join(directory, 'statement.pdf'));
    expect(pdf.subarray(0, 5).toString('latin1')).toBe('%PDF-');
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
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
            (SELECT count(*)::int FROM awards) AS awards,
            (SELECT count(*)::int FROM recurring_gifts) AS recurring_gifts,
            (SELECT count(*)::int FROM gifts WHERE recurring_gift_id IS NOT NULL) AS payments`,
  );
  expect(counts!.institutions).toBe(1);
  expect(counts!.donors).toBeGreaterThanOrEqual(100);
  expect(counts!.gifts).toBeGreaterThanOrEqual(200);
  for (const table of [
    'funds',
    'users',
    'award_cycles',
    'scholarships',
    'students',
    'awards',
    'recurring_gifts',
    'payments',
  ]) {
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

test('the demo holds gifts in euros and Canadian dollars, converted as the service converts them', async () => {
  const rates = await query<{ currency: string; n: number }>(
    database,
    'SELECT currency, count(*)::int AS n FROM exchange_rates GROUP BY currency ORDER BY currency',
  );
  expect(rates).toEqual([
    { currency: 'CAD', n: 3 },
    { currency: 'EUR', n: 3 },
  ]);
  const foreign = await query<{
    subject: string;
    currency: string;
    amount: string;
    exchange_rate: string;
    base_amount: string;
    designations: { amount: number; base_amount: number }[];
  }>(
    database,
    `SELECT subject, currency, amount::text, exchange_rate::text, base_amount::text, designations
     FROM gifts WHERE currency <> 'USD' ORDER BY id`,
  );
  expect(
    foreign.map(({ subject, currency, amount, exchange_rate, base_amount }) => ({
      subject,
      currency,
      amount,
      exchange_rate,
      base_amount,
    })),
  ).toEqual([
    // The rate on file for the gift's date (90 days ago: the one from 180 days ago).
    {
      subject: 'Hartley Arts gift from Dublin',
      currency: 'EUR',
      amount: '2000.00',
      exchange_rate: '1.093400',
      base_amount: '2186.80',
    },
    {
      subject: 'Annual Fund gift from Toronto',
      currency: 'CAD',
      amount: '500.00',
      exchange_rate: '0.716300',
      base_amount: '358.15',
    },
    // The bank's own rate, sent with the gift.
    {
      subject: 'Foundation grant paid from the European account',
      currency: 'EUR',
      amount: '7500.00',
      exchange_rate: '1.098700',
      base_amount: '8240.25',
    },
  ]);
  expect(foreign[2]!.designations.map((part) => [part.amount, part.base_amount])).toEqual([
    [5000, 5493.5],
    [2500, 2746.75],
  ]);
  // Every other gift is in the base currency at rate 1, seeded ones included.
  const [unconverted] = await query<{ n: number }>(
    database,
    `SELECT count(*)::int AS n FROM gifts
     WHERE currency = 'USD' AND (exchange_rate <> 1 OR base_amount <> amount)`,
  );
  expect(unconverted!.n).toBe(0);
});

test('the demo holds a memorial gift whose acknowledgement to the family is pending', async () => {
  const pending = await fetch(`${apiUrl}/api/v1/gifts?tribute_acknowledgement=pending`, {
    headers: { 'X-Service-API-Key': apiKey },
  });
  expect(pending.status).toBe(200);
  const { data } = (await pending.json()) as {
    data: { subject: string; tribute: Record<string, unknown> }[];
  };
  expect(data).toEqual([
    expect.objectContaining({
      subject: 'In memory of Professor Helen Marsh',
      tribute: expect.objectContaining({
        type: 'in_memory_of',
        honoree_name: 'Professor Helen Marsh',
        notify: expect.objectContaining({ email: 'marsh.family@example.org' }),
        acknowledgement: 'pending',
        sent_on: null,
      }),
    }),
  ]);
  const tributes = await query<{ subject: string; tribute_acknowledgement: string }>(
    database,
    'SELECT subject, tribute_acknowledgement FROM gifts WHERE tribute IS NOT NULL ORDER BY id',
  );
  expect(tributes).toEqual([
    { subject: 'In memory of Professor Helen Marsh', tribute_acknowledgement: 'pending' },
    { subject: 'In honour of the Okafor family', tribute_acknowledgement: 'sent' },
  ]);
});

test('the demo holds households with members, relationships, a winter address, consents and a tag', async () => {
  const get = async <T>(pathAndQuery: string) => {
    const answer = await fetch(`${apiUrl}/api/v1${pathAndQuery}`, {
      headers: { 'X-Service-API-Key': apiKey },
    });
    expect(answer.status).toBe(200);
    return (await answer.json()) as T;
  };
  const rows = await query<{ email: string; id: string }>(
    database,
    `SELECT email, id::text FROM donors WHERE email IN (
       'okafor.family@example.net', 'lindqvist.household@example.org', 'samuel.okafor@example.net',
       'ruth.okafor@example.net', 'chidi.okafor@students.example.net', 'erik.lindqvist@example.org',
       'astrid.lindqvist@example.org', 'margaret.chen@example.org', 'r.alvarez@example.com',
       'community@meridianhealth.example.com')`,
  );
  const id = (email: string) => Number(rows.find((row) => row.email === email)!.id);
  const [okafor, lindqvist, samuel, ruth, chidi, erik, astrid, margaret, robert, meridian] = [
    'okafor.family@example.net',
    'lindqvist.household@example.org',
    'samuel.okafor@example.net',
    'ruth.okafor@example.net',
    'chidi.okafor@students.example.net',
    'erik.lindqvist@example.org',
    'astrid.lindqvist@example.org',
    'margaret.chen@example.org',
    'r.alvarez@example.com',
    'community@meridianhealth.example.com',
  ].map(id) as [number, number, number, number, number, number, number, number, number, number];

  // Two households, each with its members.
  expect((await get<{ member_ids: number[] }>(`/donors/${okafor}`)).member_ids).toEqual([
    samuel,
    ruth,
    chidi,
  ]);
  const lindqvists = await get<{ data: { id: number }[] }>(`/donors?household_id=${lindqvist}`);
  expect(lindqvists.data.map((donor) => donor.id).sort()).toEqual([erik, astrid].sort());

  // Relationships, each read from either side.
  type Relationship = { related_donor_id: number; type: string; is_current: boolean };
  const relationshipsOf = async (donorId: number) =>
    (await get<{ data: Relationship[] }>(`/donors/${donorId}/relationships`)).data.map(
      ({ related_donor_id, type, is_current }) => ({ related_donor_id, type, is_current }),
    );
  expect(await relationshipsOf(samuel)).toEqual(
    expect.arrayContaining([
      { related_donor_id: ruth, type: 'spouse_of', is_current: true },
      { related_donor_id: chidi, type: 'parent_of', is_current: true },
    ]),
  );
  expect(await relationshipsOf(chidi)).toEqual([
    { related_donor_id: samuel, type: 'child_of', is_current: true },
  ]);
  expect(await relationshipsOf(meridian)).toEqual([
    { related_donor_id: robert, type: 'employer_of', is_current: true },
  ]);
  const [relationshipTypes] = await query<{ types: string[] }>(
    database,
    'SELECT array_agg(DISTINCT type ORDER BY type) AS types FROM relationships',
  );
  expect(relationshipTypes!.types).toEqual(
    expect.arrayContaining(['advisor_of', 'board_member_of', 'employee_of', 'spouse_of']),
  );

  // A winter address whose window wraps the year end: the mailing address follows the season.
  const chen = await get<{
    address: Record<string, unknown>;
    addresses: Record<string, unknown>[];
    mailing_address: Record<string, unknown> | null;
    tag_ids: number[];
  }>(`/donors/${margaret}`);
  expect(chen.addresses).toEqual([
    expect.objectContaining({
      city: 'Naples',
      type: 'seasonal',
      status: 'active',
      seasonal_from: '11-01',
      seasonal_to: '03-31',
    }),
  ]);
  const monthDay = new Date().toISOString().slice(5, 10);
  const wintering = monthDay >= '11-01' || monthDay <= '03-31';
  expect(chen.mailing_address).toMatchObject({ city: wintering ? 'Naples' : 'Boston' });

  // An opt-in with the statement agreed to, and an opt-out that the eligibility read reports.
  const consents = await get<{ data: Record<string, unknown>[] }>(`/donors/${margaret}/consents`);
  expect(consents.data).toEqual([
    expect.objectContaining({
      channel: 'email',
      purpose: 'newsletter',
      response: 'opt_in',
      statement: expect.stringContaining('newsletter'),
    }),
  ]);
  const optedOut = await get<{ data: Record<string, unknown>[] }>(`/donors/${robert}/consents`);
  expect(optedOut.data).toEqual([
    expect.objectContaining({ channel: 'mail', purpose: null, response: 'opt_out' }),
  ]);
  expect(await get(`/donors/${robert}/eligibility?channel=mail`)).toMatchObject({
    allowed: false,
    reasons: ['opted_out'],
  });

  // One tag, on Margaret Chen.
  const tags = await get<{ data: { id: number; name: string }[] }>('/tags');
  expect(tags.data.map((tag) => tag.name)).toEqual(['Major gift prospect']);
  expect(chen.tag_ids).toEqual([tags.data[0]!.id]);
  const tagged = await get<{ data: { id: number }[] }>(`/donors?tag_id=${tags.data[0]!.id}`);
  expect(tagged.data.map((donor) => donor.id)).toEqual([margaret]);
});

test("the demo's gifts are coded to the annual fund: its progress sums them by appeal and by fund", async () => {
  const get = async <T>(pathAndQuery: string) => {
    const answer = await fetch(`${apiUrl}/api/v1${pathAndQuery}`, {
      headers: { 'X-Service-API-Key': apiKey },
    });
    expect(answer.status).toBe(200);
    return (await answer.json()) as T;
  };
  const [annual] = await query<{ id: string }>(
    database,
    "SELECT id::text FROM campaigns WHERE code = 'ANNUAL'",
  );
  const appeals = await query<{ id: string; code: string }>(
    database,
    'SELECT id::text, code FROM appeals ORDER BY code',
  );
  const appealId = Object.fromEntries(appeals.map((row) => [row.code, Number(row.id)]));
  const progress = await get<{
    raised: number;
    gift_count: number;
    donor_count: number;
    by_appeal: { appeal_id: number | null; raised: number }[];
    by_fund: { fund_id: number | null; raised: number }[];
  }>(`/campaigns/${annual!.id}/progress`);
  // EUR 2000 (2186.80) and the EUR grant (8240.25: 5493.50 + 2746.75), CAD 500 (358.15) through
  // the year-end phase, and the memorial gift's 500.
  expect(progress).toMatchObject({ raised: 11285.2, gift_count: 4, donor_count: 4 });
  const cents = (rows: { raised: number }[]) =>
    rows.reduce((sum, row) => sum + Math.round(row.raised * 100), 0);
  expect(cents(progress.by_appeal)).toBe(1128520);
  expect(cents(progress.by_fund)).toBe(1128520);
  expect(
    Object.fromEntries(progress.by_appeal.map((row) => [String(row.appeal_id), row.raised])),
  ).toEqual({
    [appealId['ANNUAL-MAIL']!]: 7680.3,
    [appealId['ANNUAL-GT']!]: 3104.9,
    null: 500,
  });
  expect(progress.by_fund).toHaveLength(4);

  const coded = await get<{ data: { subject: string; currency: string }[] }>(
    `/gifts?campaign_id=${annual!.id}`,
  );
  expect(coded.data.map((gift) => gift.subject).sort()).toEqual([
    'Foundation grant paid from the European account',
    'Hartley Arts gift from Dublin',
    'In memory of Professor Helen Marsh',
  ]);
  expect(new Set(coded.data.map((gift) => gift.currency))).toEqual(new Set(['EUR', 'USD']));
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

test('the client library line replays the gift of command 2 and reads the first page', async () => {
  const line = demo.stdout.find((printedLine) => printedLine.startsWith('node '));
  const [program, ...args] = shellWords(line!);
  expect(program).toBe('node');
  const before = await query<{ n: number }>(database, 'SELECT count(*)::int AS n FROM gifts');
  const run = spawnSync(process.execPath, args, { encoding: 'utf8', timeout: 30_000 });
  expect(run.stderr).toBe('');
  const answer = JSON.parse(run.stdout) as { replayed: boolean; newest: number[] };
  expect(answer).toMatchObject({ replayed: true, next_cursor: expect.any(String) });
  expect(answer.newest).toHaveLength(5);
  const after = await query<{ n: number }>(database, 'SELECT count(*)::int AS n FROM gifts');
  expect(after[0]!.n).toBe(before[0]!.n);
});

test('the demo says which PostgreSQL and Redis it uses: the URLs given', () => {
  const using = demo.stdout.find((line) => line.startsWith('Using '));
  expect(using).toBe(
    `Using PostgreSQL: DATABASE_URL ${serverUrl}; Redis: REDIS_URL ${env('TEST_REDIS_URL')}`,
  );
});

test('SIGTERM stops the demo cleanly; the next run keeps its data, --fresh starts over, and a database the demo did not make is never dropped', async () => {
  demo.child.kill('SIGTERM');
  expect(await demo.exited).toBe(0);
  const annualGifts = async () =>
    (
      await query<{ n: number }>(
        database,
        "SELECT count(*)::int AS n FROM gifts WHERE subject = 'Annual Fund gift'",
      )
    )[0]!.n;
  expect(await annualGifts()).toBe(1);

  // A database the demo did not make is never dropped, not even with --fresh.
  const foreign = `dgs_test_${env('TEST_RUN_ID')}_notdemo_${suffix}`;
  await query('postgres', `CREATE DATABASE ${foreign}`);
  try {
    for (const args of [[], ['--fresh']]) {
      const refused = spawnDemo(demoEnv(foreign), args);
      expect(await refused.exited).toBe(1);
      expect(refused.stderr.join('\n')).toContain(
        `Database ${foreign} exists and was not made by the demo`,
      );
    }
    expect(await query(foreign, 'SELECT 1 AS one')).toEqual([{ one: 1 }]);
  } finally {
    await dropDatabase(foreign);
  }

  // The next run keeps what the last one made, with a new API key that works.
  demo = await startDemo();
  expect(demo.stdout.join('\n')).toContain('(kept from the last run; --fresh starts over)');
  expect(await annualGifts()).toBe(1);
  const kept = printed(demo);
  expect(kept.apiKey).not.toBe(apiKey);
  const replay = await execute(kept.commands[1]!);
  expect(replay.status).toBe(201);
  expect(await annualGifts()).toBe(1);
  demo.child.kill('SIGTERM');
  expect(await demo.exited).toBe(0);

  // --fresh: the demo's own database is dropped and made anew.
  demo = await startDemo(database, ['--fresh']);
  expect(demo.stdout.join('\n')).not.toContain('kept from the last run');
  expect(await annualGifts()).toBe(0);
  demo.child.kill('SIGTERM');
  expect(await demo.exited).toBe(0);
}, 60_000);

test('an unknown argument is refused with the usage line', async () => {
  const refused = spawnDemo(demoEnv(), ['--frsh']);
  expect(await refused.exited).toBe(1);
  expect(refused.stderr.join('\n')).toContain('Unknown argument --frsh. Usage: npm run demo');
});

test('the repository runs the demo with `npm run demo`', () => {
  const packageJson = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  expect(packageJson.scripts.demo).toContain('dist/cli/demo.js');
});
