/**
 * `npm run demo`: a running service with realistic data, in one command.
 *
 * 1. Creates a fresh database: `dgs_demo` on DATABASE_URL's server (default
 *    postgres://postgres@127.0.0.1:5432/postgres), or the one DEMO_DATABASE_URL names (on the same
 *    server). An older demo database of that name is dropped first; a database the demo did not
 *    create is never dropped.
 * 2. Migrates it, and starts the API and a worker in this process (as `npm run dev` does).
 * 3. Creates the institution "Northbridge University" and fills it through the API itself, so every
 *    record passed the same validation a client's would: staff, funds, named donors and their
 *    gifts, two award cycles with scholarships, students and awards in every status. The volume
 *    seeder then adds a few hundred more donors and gifts.
 * 4. Prints the API key and three curl commands (a dry run, an idempotent create, a paged list)
 *    that work as printed, then serves until SIGTERM or Ctrl+C.
 *
 * Settings: DATABASE_URL, DEMO_DATABASE_URL, REDIS_URL (default redis://127.0.0.1:6379), PORT
 * (default 3000), QUEUE_PREFIX (default dgs-demo-<database>, emptied at start), ADMIN_TOKEN
 * (default: a random one, printed), LOG_LEVEL (default warn), CURSOR_SECRET (default: random).
 */
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import pg from 'pg';
import { sql } from 'slonik';
import { z } from 'zod';
import { startApi } from '../api/server.js';
import { ConfigError, loadConfig, type Config } from '../common/config.js';
import { migrateUp } from '../common/db/migrate.js';
import { createDatabasePool } from '../common/db/pool.js';
import { createInstitution } from '../common/institutions.js';
import { createLogger } from '../common/logger.js';
import { createRedis, redisReady } from '../common/redis.js';
import { seedInstitution } from '../common/seed/seedInstitution.js';
import { firstNames, lastNames } from '../common/seed/vocabulary.js';
import { onShutdown } from '../common/shutdown.js';
import { startWorker } from '../worker/worker.js';

class DemoError extends Error {}

const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/postgres';
const DEFAULT_DEMO_DATABASE = 'dgs_demo';
/** Marks a database as the demo's own: only such a database is ever dropped. */
const DEMO_COMMENT = 'donor-gift-service demo database (npm run demo); dropped by the next run';
const INSTITUTION = 'Northbridge University';
const SEEDED = { donors: 150, gifts: 320, funds: 4 };

// ---------------------------------------------------------------------------------------------
// The database

interface Target {
  /** Where CREATE/DROP DATABASE run: DATABASE_URL. */
  serverUrl: string;
  url: string;
  name: string;
}

function demoTarget(env: NodeJS.ProcessEnv): Target {
  const serverUrl = env.DATABASE_URL || DEFAULT_DATABASE_URL;
  let url: URL;
  try {
    url = new URL(env.DEMO_DATABASE_URL || serverUrl);
  } catch {
    throw new DemoError(
      `Invalid configuration: ${env.DEMO_DATABASE_URL ? 'DEMO_DATABASE_URL' : 'DATABASE_URL'} is not a URL`,
    );
  }
  if (!env.DEMO_DATABASE_URL) url.pathname = `/${DEFAULT_DEMO_DATABASE}`;
  const name = decodeURIComponent(url.pathname.slice(1));
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name)) {
    throw new DemoError(
      `Invalid configuration: DEMO_DATABASE_URL must name a database of lower-case letters, digits and "_" (got "${name}")`,
    );
  }
  if (name === decodeURIComponent(new URL(serverUrl).pathname.slice(1))) {
    throw new DemoError(
      'Invalid configuration: DEMO_DATABASE_URL must name another database than DATABASE_URL',
    );
  }
  return { serverUrl, url: url.toString(), name };
}

/** Drops the previous demo database of this name (only if the demo made it), then creates it. */
async function freshDatabase(target: Target): Promise<void> {
  const admin = new pg.Client({ connectionString: target.serverUrl });
  await admin.connect();
  try {
    const existing = await admin.query<{ comment: string | null }>(
      `SELECT shobj_description(oid, 'pg_database') AS comment FROM pg_database WHERE datname = $1`,
      [target.name],
    );
    const row = existing.rows[0];
    if (row) {
      if (row.comment !== DEMO_COMMENT) {
        throw new DemoError(
          `Database ${target.name} exists and was not made by the demo: not dropping it. ` +
            'Name another one with DEMO_DATABASE_URL.',
        );
      }
      await admin.query(`DROP DATABASE ${target.name} WITH (FORCE)`);
    }
    await admin.query(`CREATE DATABASE ${target.name}`);
    await admin.query(`COMMENT ON DATABASE ${target.name} IS '${DEMO_COMMENT}'`);
  } finally {
    await admin.end();
  }
}

/** Checks that Redis answers, and deletes the keys under the demo's own queue prefix. */
async function emptyQueue(url: string, prefix: string | null): Promise<void> {
  const redis = createRedis(url, 'request');
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
      throw new DemoError(`Redis does not answer at ${url}: start it or set REDIS_URL.`);
    if (!prefix) return;
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      if (keys.length) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
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

// ---------------------------------------------------------------------------------------------
// The data, written through the API

type Body = Record<string, unknown>;
type Created = Body & { id: number };

const retryable = new Set([429, 503, 504]);
const MAX_ATTEMPTS = 20;

class ApiClient {
  constructor(
    private readonly baseUrl: string,
    private readonly key: string,
  ) {}

  /**
   * As a client should: a 429 waits its Retry-After and a 503 or 504 a moment, then the same
   * request goes again under the same Idempotency-Key, which makes the retry safe.
   */
  async send(method: string, path: string, body: Body, idempotencyKey: string): Promise<Created> {
    for (let attempt = 1; ; attempt += 1) {
      const response = await fetch(`${this.baseUrl}/api/v1${path}`, {
        method,
        headers: {
          'X-Service-API-Key': this.key,
          'Content-Type': 'application/json',
          'Idempotency-Key': idempotencyKey,
        },
        body: JSON.stringify(body),
      });
      const text = await response.text();
      if (response.ok) return JSON.parse(text) as Created;
      if (!retryable.has(response.status) || attempt === MAX_ATTEMPTS) {
        throw new DemoError(`${method} ${path} answered ${response.status}: ${text}`);
      }
      const waitSeconds = Number(response.headers.get('Retry-After') ?? 1) || 1;
      await new Promise((resolve) => setTimeout(resolve, waitSeconds * 1000));
    }
  }

  create(path: string, body: Body, key: string): Promise<Created> {
    return this.send('POST', path, body, `demo-${key}`);
  }

  update(path: string, body: Body, key: string): Promise<Created> {
    return this.send('PATCH', path, body, `demo-${key}`);
  }
}

/** Runs the tasks a few at a time (the worker commits them in parallel), keeping their order. */
async function inBatches<T, R>(items: readonly T[], run: (item: T, index: number) => Promise<R>) {
  const results: R[] = [];
  const size = 8;
  for (let from = 0; from < items.length; from += size) {
    const batch = items.slice(from, from + size);
    results.push(...(await Promise.all(batch.map((item, i) => run(item, from + i)))));
  }
  return results;
}

const isoDate = (date: Date) => date.toISOString().slice(0, 10);
const daysAgo = (days: number) => isoDate(new Date(Date.now() - days * 86_400_000));
const slug = (text: string) => text.toLowerCase().replace(/[^a-z0-9]+/g, '');

const address = (line1: string, city: string, region: string, postalCode: string) => ({
  line1,
  city,
  region,
  postal_code: postalCode,
  country: 'US',
});

const staff = [
  { first_name: 'Dana', last_name: 'Whitfield', role: 'admin' },
  { first_name: 'Marcus', last_name: 'Osei', role: 'gift_officer' },
  { first_name: 'Priya', last_name: 'Raman', role: 'gift_officer' },
  { first_name: 'Grace', last_name: 'Liu', role: 'gift_officer' },
  { first_name: 'Elena', last_name: 'Duarte', role: 'scholarship_manager' },
  { first_name: 'Tom', last_name: 'Becker', role: 'viewer' },
];

const funds = [
  {
    code: 'ANNUAL',
    name: 'Northbridge Annual Fund',
    description: 'Unrestricted support for the university’s greatest needs.',
  },
  {
    code: 'STEM-END',
    name: 'STEM Scholarship Endowment',
    description: 'Endowed scholarships for students in science, technology and engineering.',
    restriction: 'permanently_restricted',
    endowed: true,
    award_limit: 150000,
  },
  {
    code: 'FIRSTGEN',
    name: 'First-Generation Student Fund',
    description: 'Grants for students who are the first in their family at university.',
    restriction: 'temporarily_restricted',
    award_limit: 90000,
  },
  {
    code: 'ARTS',
    name: 'Hartley Arts & Humanities Fund',
    restriction: 'temporarily_restricted',
    award_limit: 60000,
  },
  {
    code: 'ATHLETICS',
    name: 'Athletics Excellence Fund',
    restriction: 'temporarily_restricted',
    award_limit: 70000,
  },
  { code: 'LIBRARY', name: 'Library Acquisitions Fund' },
];

/** Named donors; `officer` indexes `staff`, gifts are [amount, days ago, fund code, type]. */
const donors: { body: Body; officer: number; gifts: [number, number, string, string][] }[] = [
  {
    body: {
      role: 'Individual',
      first_name: 'Margaret',
      last_name: 'Chen',
      email: 'margaret.chen@example.org',
      phone: '+1 617 555 0142',
      address: address('14 Beacon Street', 'Boston', 'MA', '02108'),
    },
    officer: 1,
    gifts: [
      [25000, 700, 'STEM-END', 'stock'],
      [25000, 335, 'STEM-END', 'stock'],
      [1000, 40, 'ANNUAL', 'credit_card'],
    ],
  },
  {
    body: {
      role: 'Individual',
      first_name: 'Robert',
      last_name: 'Alvarez',
      email: 'r.alvarez@example.com',
      address: address('220 Cedar Lane', 'Austin', 'TX', '78701'),
    },
    officer: 2,
    gifts: [
      [250, 400, 'ANNUAL', 'credit_card'],
      [250, 35, 'ANNUAL', 'credit_card'],
    ],
  },
  {
    body: {
      role: 'Household',
      first_name: 'Samuel and Ruth',
      last_name: 'Okafor',
      email: 'okafor.family@example.net',
      address: address('9 Willow Court', 'Evanston', 'IL', '60201'),
    },
    officer: 1,
    gifts: [
      [5000, 500, 'FIRSTGEN', 'check'],
      [7500, 120, 'FIRSTGEN', 'check'],
    ],
  },
  {
    body: {
      role: 'Household',
      last_name: 'Lindqvist',
      email: 'lindqvist.household@example.org',
      address: address('87 Harbor Road', 'Portland', 'ME', '04101'),
    },
    officer: 3,
    gifts: [[1500, 220, 'LIBRARY', 'bank_transfer']],
  },
  {
    body: {
      role: 'Organization',
      organization_name: 'Northbridge Alumni Association',
      email: 'giving@alumni.northbridge.example.edu',
    },
    officer: 2,
    gifts: [
      [12000, 600, 'ATHLETICS', 'bank_transfer'],
      [15000, 240, 'ATHLETICS', 'bank_transfer'],
    ],
  },
  {
    body: {
      role: 'Foundation',
      organization_name: 'Hartley Family Foundation',
      email: 'grants@hartleyfoundation.example.org',
      address: address('1 Foundation Plaza', 'New York', 'NY', '10017'),
    },
    officer: 1,
    gifts: [
      [50000, 650, 'ARTS', 'bank_transfer'],
      [40000, 280, 'ARTS', 'pledge'],
    ],
  },
  {
    body: {
      role: 'Corporation',
      organization_name: 'Meridian Health Systems',
      email: 'community@meridianhealth.example.com',
    },
    officer: 3,
    gifts: [
      [20000, 450, 'STEM-END', 'bank_transfer'],
      [10000, 90, 'FIRSTGEN', 'bank_transfer'],
    ],
  },
  {
    body: {
      role: 'Corporation',
      organization_name: 'Cobalt Robotics Inc.',
      email: 'foundation@cobaltrobotics.example.com',
    },
    officer: 2,
    gifts: [
      [15000, 300, 'STEM-END', 'stock'],
      [2500, 10, 'ANNUAL', 'in_kind'],
    ],
  },
  {
    body: {
      role: 'Individual',
      first_name: 'Aiko',
      last_name: 'Tanaka',
      email: 'aiko.tanaka@example.jp',
      gives_anonymously: true,
    },
    officer: 3,
    gifts: [
      [10000, 380, 'LIBRARY', 'check'],
      [10000, 15, 'LIBRARY', 'check'],
    ],
  },
  {
    // No email: created with an Idempotency-Key, its only protection against duplicates.
    body: {
      role: 'Individual',
      first_name: 'Daniel',
      last_name: 'Fitzgerald',
      phone: '+1 312 555 0199',
    },
    officer: 2,
    gifts: [
      [100, 560, 'ANNUAL', 'cash'],
      [100, 190, 'ANNUAL', 'cash'],
      [150, 5, 'ANNUAL', 'cash'],
    ],
  },
  {
    body: {
      role: 'Individual',
      first_name: 'Eleanor',
      last_name: 'Brennan',
      email: 'eleanor.brennan@example.org',
      status: 'deceased',
    },
    officer: 1,
    gifts: [[100000, 900, 'STEM-END', 'other']],
  },
  {
    body: {
      role: 'Individual',
      first_name: 'Sofia',
      last_name: 'Marquez',
      email: 'sofia.marquez@example.com',
      status: 'inactive',
    },
    officer: 3,
    gifts: [[75, 800, 'ANNUAL', 'credit_card']],
  },
];

const scholarships = [
  { name: 'STEM Excellence Scholarship', fund: 'STEM-END', amount: 5000 },
  { name: 'Ada Lovelace Women in Computing Award', fund: 'STEM-END', amount: 4000 },
  { name: 'First-Generation Scholars Grant', fund: 'FIRSTGEN', amount: 3500 },
  { name: 'Hartley Prize in the Humanities', fund: 'ARTS', amount: 3000 },
  { name: 'Northbridge Athletic Scholarship', fund: 'ATHLETICS', amount: 4500 },
];

const STUDENTS = 40;
/** Awards in the current cycle end in these statuses, in turn. */
const currentStatuses = ['offered', 'accepted', 'accepted', 'disbursed', 'declined', 'offered'];

interface Summary {
  institutionId: number;
  key: string;
  donorId: number;
  fundId: number;
}

async function fillInstitution(client: ApiClient): Promise<Omit<Summary, 'institutionId' | 'key'>> {
  const users = await inBatches(staff, (user, i) =>
    client.create(
      '/users',
      {
        ...user,
        email: `${slug(user.first_name)}.${slug(user.last_name)}@northbridge.example.edu`,
      },
      `user-${i}`,
    ),
  );
  const fundRows = await inBatches(funds, (fund, i) => client.create('/funds', fund, `fund-${i}`));
  const fundId = new Map(fundRows.map((fund) => [String(fund.code), fund.id]));

  const donorRows = await inBatches(donors, (donor, i) =>
    client.create(
      '/donors',
      { ...donor.body, assigned_user_id: users[donor.officer]!.id },
      `donor-${i}`,
    ),
  );
  const gifts = donors.flatMap((donor, d) =>
    donor.gifts.map(([amount, ago, fund, type], g) => ({
      key: `gift-${d}-${g}`,
      body: {
        donor_id: donorRows[d]!.id,
        amount,
        subject: `${funds.find((f) => f.code === fund)!.name} gift`,
        gift_date: daysAgo(ago),
        type,
        fund_id: fundId.get(fund),
        ...(type === 'check' ? { check_number: String(1040 + d * 10 + g) } : {}),
      },
    })),
  );
  await inBatches(gifts, (gift) => client.create('/gifts', gift.body, gift.key));

  // Award cycles are academic years, August to May: last year's and this year's.
  const now = new Date();
  const thisYear = now.getUTCMonth() >= 7 ? now.getUTCFullYear() : now.getUTCFullYear() - 1;
  const cycles = await inBatches([thisYear - 1, thisYear], (year, i) =>
    client.create(
      '/award-cycles',
      {
        name: `${year}–${String(year + 1).slice(2)} Academic Year`,
        starts_on: `${year}-08-01`,
        ends_on: `${year + 1}-05-31`,
        status: 'open',
      },
      `cycle-${i}`,
    ),
  );
  const scholarshipRows = await inBatches(scholarships, (scholarship, i) =>
    client.create(
      '/scholarships',
      {
        name: scholarship.name,
        fund_id: fundId.get(scholarship.fund),
        description: `Awarded each academic year from the ${funds.find((f) => f.code === scholarship.fund)!.name}.`,
      },
      `scholarship-${i}`,
    ),
  );
  const students = await inBatches(
    Array.from({ length: STUDENTS }, (_, i) => i),
    (i) => {
      const first = firstNames[(i * 7) % firstNames.length]!;
      const last = lastNames[(i * 11 + 3) % lastNames.length]!;
      return client.create(
        '/students',
        {
          student_number: `S-${24101 + i}`,
          first_name: first,
          last_name: last,
          email: i % 5 === 4 ? null : `${slug(first)}.${slug(last)}${i}@students.northbridge.edu`,
        },
        `student-${i}`,
      );
    },
  );

  // Last year: 12 awards, all paid out; then that cycle closes. This year: 30 awards in every status.
  const awards = [
    ...Array.from({ length: 12 }, (_, i) => ({
      cycle: 0,
      student: i,
      statuses: ['accepted', 'disbursed'],
    })),
    ...Array.from({ length: 30 }, (_, i) => {
      const end = currentStatuses[i % currentStatuses.length]!;
      const statuses =
        end === 'offered' ? [] : end === 'disbursed' ? ['accepted', 'disbursed'] : [end];
      return { cycle: 1, student: 10 + i, statuses };
    }),
  ];
  await inBatches(awards, async (award, i) => {
    const scholarship = scholarships[i % scholarships.length]!;
    const created = await client.create(
      '/awards',
      {
        award_cycle_id: cycles[award.cycle]!.id,
        scholarship_id: scholarshipRows[i % scholarships.length]!.id,
        student_id: students[award.student % STUDENTS]!.id,
        amount: scholarship.amount,
      },
      `award-${i}`,
    );
    for (const status of award.statuses) {
      await client.update(`/awards/${created.id}`, { status }, `award-${i}-${status}`);
    }
  });
  await client.update(`/award-cycles/${cycles[0]!.id}`, { status: 'closed' }, 'cycle-0-closed');

  return { donorId: donorRows[0]!.id, fundId: fundId.get('ANNUAL')! };
}

// ---------------------------------------------------------------------------------------------
// What the demo prints

/** Single quotes for the shell: 'it'\''s'. */
const quote = (value: string) => `'${value.replaceAll("'", `'\\''`)}'`;

function curl(
  method: string,
  url: string,
  key: string,
  options: { body?: Body; idempotencyKey?: string; include?: boolean } = {},
): string {
  const parts = ['curl', '-sS'];
  if (options.include) parts.push('-i');
  if (method !== 'GET') parts.push('-X', method);
  parts.push(quote(url), '-H', quote(`X-Service-API-Key: ${key}`));
  if (options.idempotencyKey) parts.push('-H', quote(`Idempotency-Key: ${options.idempotencyKey}`));
  if (options.body) {
    parts.push(
      '-H',
      quote('Content-Type: application/json'),
      '-d',
      quote(JSON.stringify(options.body)),
    );
  }
  return parts.join(' ');
}

async function counts(pool: Awaited<ReturnType<typeof createDatabasePool>>, institutionId: number) {
  const tables = [
    'donors',
    'gifts',
    'funds',
    'users',
    'award_cycles',
    'scholarships',
    'students',
    'awards',
  ] as const;
  const result: Record<string, number> = {};
  for (const table of tables) {
    result[table] = Number(
      await pool.oneFirst(sql.type(z.object({ n: z.number() }))`
        SELECT count(*)::int AS n FROM ${sql.identifier([table])}
        WHERE institution_id = ${institutionId}`),
    );
  }
  return result;
}

// ---------------------------------------------------------------------------------------------

function demoConfig(env: NodeJS.ProcessEnv, target: Target, queuePrefix: string): Config {
  try {
    return loadConfig({
      ...env,
      PORT: env.PORT || '3000',
      DATABASE_URL: target.url,
      REDIS_URL: env.REDIS_URL || 'redis://127.0.0.1:6379',
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

async function main(): Promise<void> {
  const env = process.env;
  const target = demoTarget(env);
  const derivedPrefix = `dgs-demo-${target.name}`;
  const config = demoConfig(env, target, derivedPrefix);
  if (!(await portIsFree(config.PORT))) {
    throw new DemoError(
      `Port ${config.PORT} is in use: set PORT to another one (0 picks a free one).`,
    );
  }
  const logger = createLogger(config.LOG_LEVEL);
  const say = (line = '') => process.stdout.write(`${line}\n`);

  // A queue prefix of the demo's own: jobs of an earlier demo run must not reach this database.
  await emptyQueue(config.REDIS_URL, config.QUEUE_PREFIX === derivedPrefix ? derivedPrefix : null);

  say(`Preparing the demo database ${target.name} …`);
  await freshDatabase(target);
  await migrateUp(target.url);

  const worker = await startWorker(config, logger);
  const api = await startApi(config, logger);
  const pool = await createDatabasePool(target.url, {
    maxPoolSize: 2,
    applicationName: 'dgs-demo',
  });
  onShutdown(logger, 'demo', async () => {
    await api.close();
    await worker.close();
    await pool.end();
  });

  say(`Creating ${INSTITUTION} and its data through the API …`);
  const created = await createInstitution(pool, INSTITUTION, 'USD');
  const client = new ApiClient(api.url, created.apiKey.key);
  const ids = await fillInstitution(client);
  await seedInstitution(pool, { institutionId: created.institution.id, ...SEEDED });
  const totals = await counts(pool, created.institution.id);

  const key = created.apiKey.key;
  const base = `${api.url}/api/v1`;
  const lines = [
    '',
    'Donor and Gift Management Service: demo ready',
    '',
    `  API            ${api.url}/api/v1`,
    `  Docs           ${api.url}/docs`,
    `  Queue board    ${api.url}/admin/queues  (any user name; password: ${config.ADMIN_TOKEN})`,
    `  Database       ${target.name}`,
    `  Institution    ${INSTITUTION} (id ${created.institution.id})`,
    `  API key        ${key}`,
    `  Data           ${Object.entries(totals)
      .map(([table, n]) => `${n} ${table.replace('_', ' ')}`)
      .join(', ')}`,
    '',
    'Try it (each command is one line):',
    '',
    '# 1. Dry run: checks a new donor exactly as a real create would, and writes nothing (id 0).',
    curl('POST', `${base}/donors?dry_run=true`, key, {
      body: {
        role: 'Individual',
        first_name: 'Ada',
        last_name: 'Lovelace',
        email: 'ada.lovelace@example.org',
      },
    }),
    '',
    '# 2. Idempotent create: a gift. Run it twice: the second answer replays the first',
    '#    (same id, header Idempotent-Replayed: true) and no second gift is written.',
    curl('POST', `${base}/gifts`, key, {
      include: true,
      idempotencyKey: 'demo-gift-margaret-chen-1',
      body: {
        donor_id: ids.donorId,
        amount: 500,
        subject: 'Annual Fund gift',
        gift_date: isoDate(new Date()),
        type: 'credit_card',
        fund_id: ids.fundId,
      },
    }),
    '',
    '# 3. Paged list: the 5 newest gifts. For the next page, add &starting_after=<next_cursor>.',
    curl('GET', `${base}/gifts?limit=5`, key),
    '',
    'Stop with Ctrl+C (SIGTERM). The database stays until the next `npm run demo` replaces it.',
  ];
  for (const line of lines) say(line);
}

main().catch((error: unknown) => {
  const message =
    error instanceof DemoError
      ? error.message
      : `Demo failed: ${error instanceof Error ? error.message : String(error)}`;
  process.stderr.write(`${message}\n`);
  process.exit(1);
});
