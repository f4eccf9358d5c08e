import { randomBytes } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import pg from 'pg';
import { runner } from 'node-pg-migrate';
import { generateApiKey } from '../common/auth/apiKeys.js';
import { migrateUp, migrationsDir } from '../common/db/migrate.js';
import { startTestService, type TestService } from './helpers/harness.js';
import type { ErrorEnvelope } from './helpers/threeWays.js';

/**
 * The base-amounts migration (fundraising.md §2) converts what is in the institution's currency
 * at rate 1, parts and refunds included, and leaves what is in another currency unconverted
 * (NULL rate and base amount) and names it in a notice; then, through the API, such a gift is
 * given its rate by PATCH and counts, unless it has refunds (409 gift_locked: void and record it
 * again).
 */
const MIGRATION = '1734800000000_base-amounts';

let client: pg.Client;
let databaseName: string;
let databaseUrl: string;
let service: TestService | undefined;

/** The first `count` migrations, as the test before a migration sets the schema it starts from. */
const migrateFirst = (count: number) =>
  runner({
    databaseUrl,
    dir: migrationsDir,
    direction: 'up',
    count,
    migrationsTable: 'pgmigrations',
    checkOrder: true,
    singleTransaction: true,
    log: () => {},
  });

beforeAll(async () => {
  const base = process.env.TEST_DATABASE_URL!;
  databaseName = `dgs_migration_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${databaseName}`);
  await admin.end();
  const url = new URL(base);
  url.pathname = `/${databaseName}`;
  databaseUrl = url.toString();
  client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
});

afterAll(async () => {
  await service?.close();
  await client?.end();
  const admin = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL! });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${databaseName} WITH (FORCE)`);
  await admin.end();
});

const rows = async (text: string) => (await client.query(text)).rows;

test('what is in the institution’s currency is converted at rate 1; the rest is left unconverted and reported; PATCH gives it its rate', async () => {
  const files = (await readdir(migrationsDir)).filter((file) => file.endsWith('.sql')).sort();
  const before = files.indexOf(`${MIGRATION}.sql`);
  expect(before).toBeGreaterThan(0);
  await migrateFirst(before);

  const key = generateApiKey();
  await client.query(`
    INSERT INTO institutions (name, currency) VALUES ('Old College', 'USD'), ('Euro College', 'EUR');
    INSERT INTO funds (institution_id, name, code, restriction, endowed, status)
      VALUES (1, 'General', 'GEN', 'unrestricted', false, 'active'),
             (1, 'Library', 'LIB', 'unrestricted', false, 'active'),
             (2, 'Theirs', 'GEN', 'unrestricted', false, 'active');
    INSERT INTO donors (institution_id, role, first_name, last_name, status, gives_anonymously)
      VALUES (1, 'Individual', 'Ada', 'Lovelace', 'active', false),
             (1, 'Individual', 'Bo', 'Byron', 'active', false),
             (2, 'Individual', 'Cy', 'Other', 'active', false);
    INSERT INTO gifts (institution_id, donor_id, amount, currency, subject, gift_date, type,
                       designations, fund_ids, soft_credits, soft_credit_donor_ids, amount_refunded)
      VALUES (1, 1, 100, 'USD', 'Dollars', '2025-03-01', 'cash',
              '[{"fund_id": 1, "amount": 60, "amount_refunded": 10},
                {"fund_id": 2, "amount": 40, "amount_refunded": 0}]', '{1,2}',
              '[{"donor_id": 2, "amount": 100, "reason": "household"}]', '{2}', 10),
             (1, 1, 50, 'EUR', 'Euros', '2025-04-01', 'cash',
              '[{"fund_id": 1, "amount": 50, "amount_refunded": 0}]', '{1}',
              '[{"donor_id": 2, "amount": 50, "reason": "household"}]', '{2}', 0),
             (1, 1, 20, 'EUR', 'Euros, partly refunded', '2025-05-01', 'cash',
              '[]', '{}', '[]', '{}', 5),
             (2, 3, 70, 'EUR', 'Euros at home', '2025-04-01', 'cash',
              '[{"fund_id": 3, "amount": 70, "amount_refunded": 0}]', '{3}', '[]', '{}', 0);
    INSERT INTO gift_refunds (institution_id, gift_id, amount, refund_date, designations)
      VALUES (1, 1, 10, '2025-03-10', '[{"fund_id": 1, "amount": 10}]'),
             (1, 3, 5, '2025-05-10', '[]');
    INSERT INTO pledges (institution_id, donor_id, amount, pledge_date, designations, fund_ids,
                         schedule, installments, fund_outstanding)
      VALUES (1, 1, 300, '2025-01-01', '[{"fund_id": 1, "amount": 300}]', '{1}',
              '{"frequency": "monthly", "installments": 1, "first_due_on": "2027-01-01"}',
              '[{"number": 1, "due_on": "2027-01-01", "amount": 300}]',
              '[{"fund_id": 1, "amount": 300}]');
    INSERT INTO recurring_gifts (institution_id, donor_id, amount, currency, frequency, start_on)
      VALUES (1, 1, 10, 'USD', 'monthly', '2025-01-01'),
             (1, 1, 25, 'EUR', 'monthly', '2025-01-01');`);
  await client.query(
    `INSERT INTO api_keys (id, institution_id, secret_sha256) VALUES ($1, 1, $2)`,
    [key.id, key.digest],
  );

  // As `npm run migrate` runs it (this one and every later one), its log what the operator sees.
  const log: string[] = [];
  await migrateUp(databaseUrl, (message) => log.push(message));

  // The institution's own currency, each institution's: rate 1, every part at its amount.
  expect(
    await rows(`
      SELECT id, currency, exchange_rate::text, base_amount::text, base_amount_refunded::text,
             designations, soft_credits
      FROM gifts ORDER BY id`),
  ).toEqual([
    {
      id: '1',
      currency: 'USD',
      exchange_rate: '1.000000',
      base_amount: '100.00',
      base_amount_refunded: '10.00',
      designations: [
        { fund_id: 1, amount: 60, amount_refunded: 10, base_amount: 60, base_amount_refunded: 10 },
        { fund_id: 2, amount: 40, amount_refunded: 0, base_amount: 40, base_amount_refunded: 0 },
      ],
      soft_credits: [{ donor_id: 2, amount: 100, reason: 'household', base_amount: 100 }],
    },
    {
      id: '2',
      currency: 'EUR',
      exchange_rate: null,
      base_amount: null,
      base_amount_refunded: '0.00',
      designations: [{ fund_id: 1, amount: 50, amount_refunded: 0 }],
      soft_credits: [{ donor_id: 2, amount: 50, reason: 'household' }],
    },
    {
      id: '3',
      currency: 'EUR',
      exchange_rate: null,
      base_amount: null,
      base_amount_refunded: '0.00',
      designations: [],
      soft_credits: [],
    },
    {
      id: '4',
      currency: 'EUR',
      exchange_rate: '1.000000',
      base_amount: '70.00',
      base_amount_refunded: '0.00',
      designations: [
        { fund_id: 3, amount: 70, amount_refunded: 0, base_amount: 70, base_amount_refunded: 0 },
      ],
      soft_credits: [],
    },
  ]);
  expect(
    await rows(`SELECT gift_id, base_amount::text, designations FROM gift_refunds ORDER BY id`),
  ).toEqual([
    {
      gift_id: '1',
      base_amount: '10.00',
      designations: [{ fund_id: 1, amount: 10, base_amount: 10 }],
    },
    { gift_id: '3', base_amount: null, designations: [] },
  ]);
  // Pledges had no currency: each takes its institution's, at rate 1.
  expect(
    await rows(`
      SELECT currency, exchange_rate::text, base_amount::text, base_amount_paid::text,
             base_balance::text
      FROM pledges`),
  ).toEqual([
    {
      currency: 'USD',
      exchange_rate: '1.000000',
      base_amount: '300.00',
      base_amount_paid: '0.00',
      base_balance: '300.00',
    },
  ]);
  expect(
    await rows(`
      SELECT currency, exchange_rate::text, base_amount::text FROM recurring_gifts ORDER BY id`),
  ).toEqual([
    { currency: 'USD', exchange_rate: '1.000000', base_amount: '10.00' },
    { currency: 'EUR', exchange_rate: null, base_amount: null },
  ]);
  // The operator is told what is left, per institution and currency.
  expect(log.filter((line) => line.startsWith('NOTICE: ')).sort()).toEqual([
    'NOTICE: institution 1: 1 recurring gifts in EUR have no exchange rate and count in no total until given one',
    'NOTICE: institution 1: 2 gifts in EUR have no exchange rate and count in no total until given one',
  ]);

  // The service on this database.
  service = await startTestService({
    DATABASE_URL: databaseUrl,
    DATABASE_MIGRATION_URL: databaseUrl,
  });
  const call = <T = Record<string, unknown>>(method: string, path: string, body?: unknown) =>
    service!.call<T>(method, `/api/v1${path}`, { key: key.key, body });
  type Giving = { giving: { total_amount: number; soft_credit_total: number } };

  // Unconverted: shown without a rate, and counted nowhere.
  const unconverted = await call('GET', '/gifts/2');
  expect(unconverted.status).toBe(200);
  expect(unconverted.body).toMatchObject({
    currency: 'EUR',
    amount: 50,
    exchange_rate: null,
    base_amount: null,
    designations: [{ fund_id: 1, amount: 50, amount_refunded: 0, base_amount: null }],
    soft_credits: [{ donor_id: 2, amount: 50, reason: 'household', base_amount: null }],
  });
  expect((await call<Giving>('GET', '/donors/1')).body.giving.total_amount).toBe(90);
  expect((await call<Giving>('GET', '/donors/2')).body.giving.soft_credit_total).toBe(90);

  // Another field keeps it unconverted; the rate converts it.
  const renamed = await call('PATCH', '/gifts/2', { subject: 'Euros, 2025' });
  expect(renamed.status).toBe(200);
  expect(renamed.body).toMatchObject({ exchange_rate: null, base_amount: null });
  const converted = await call('PATCH', '/gifts/2', { exchange_rate: 1.1 });
  expect(converted.status).toBe(200);
  expect(converted.body).toMatchObject({
    exchange_rate: 1.1,
    base_amount: 55,
    designations: [{ fund_id: 1, amount: 50, amount_refunded: 0, base_amount: 55 }],
    soft_credits: [{ donor_id: 2, amount: 50, base_amount: 55 }],
  });
  expect(
    await rows(`
      SELECT exchange_rate::text, base_amount::text, base_amount_refunded::text, designations,
             soft_credits
      FROM gifts WHERE id = 2`),
  ).toEqual([
    {
      exchange_rate: '1.100000',
      base_amount: '55.00',
      base_amount_refunded: '0.00',
      designations: [
        { fund_id: 1, amount: 50, amount_refunded: 0, base_amount: 55, base_amount_refunded: 0 },
      ],
      soft_credits: [{ donor_id: 2, amount: 50, reason: 'household', base_amount: 55 }],
    },
  ]);
  // One event per write: the rate's PATCH is a gift.updated saying what it was before.
  const events = await call<{
    data: { type: string; data: { previous_attributes?: Record<string, unknown> } }[];
  }>('GET', '/events?object_type=gift&object_id=2');
  expect(events.body.data.map((event) => event.type)).toEqual(['gift.updated', 'gift.updated']);
  expect(events.body.data[0]!.data.previous_attributes).toMatchObject({
    exchange_rate: null,
    base_amount: null,
  });
  expect((await call<Giving>('GET', '/donors/1')).body.giving.total_amount).toBe(145);
  expect((await call<Giving>('GET', '/donors/2')).body.giving.soft_credit_total).toBe(145);
  expect(
    (await call<{ totals: { gifts_received: number } }>('GET', '/funds/1')).body.totals
      .gifts_received,
  ).toBe(105);

  // With refunds: locked, and told how to put it right.
  const locked = await rows(`SELECT * FROM gifts WHERE id = 3`);
  const refunded = await call<ErrorEnvelope>('PATCH', '/gifts/3', { exchange_rate: 1.1 });
  expect(refunded.status).toBe(409);
  expect(refunded.body.error.code).toBe('gift_locked');
  expect(refunded.body.error.message).toMatch(/recorded before currencies.*Void it/);
  expect(await rows(`SELECT * FROM gifts WHERE id = 3`)).toEqual(locked);

  // A recurring gift is given its rate the same way.
  const recurring = await call('PATCH', '/recurring-gifts/2', { exchange_rate: 1.1 });
  expect(recurring.status).toBe(200);
  expect(recurring.body).toMatchObject({ currency: 'EUR', exchange_rate: 1.1, base_amount: 27.5 });
  expect(
    await rows(`SELECT exchange_rate::text, base_amount::text FROM recurring_gifts WHERE id = 2`),
  ).toEqual([{ exchange_rate: '1.100000', base_amount: '27.50' }]);
});
