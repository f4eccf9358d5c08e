import { randomBytes } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import pg from 'pg';
import { runner } from 'node-pg-migrate';
import { migrationsDir } from '../common/db/migrate.js';

/**
 * The money-record migration moves existing data: a database seeded with the schema before it
 * (gifts designated by `fund_id`) is migrated, and every gift keeps its fund as one designation
 * of its whole amount, with nothing lost; migrating down gives the old columns back.
 */
const MIGRATION = '1733000000000_money-record';

let client: pg.Client;
let databaseName: string;
let databaseUrl: string;

const migrate = (direction: 'up' | 'down', count?: number) =>
  runner({
    databaseUrl,
    dir: migrationsDir,
    direction,
    migrationsTable: 'pgmigrations',
    checkOrder: true,
    singleTransaction: true,
    log: () => {},
    ...(count === undefined ? {} : { count }),
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
  await client?.end();
  const admin = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL! });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${databaseName} WITH (FORCE)`);
  await admin.end();
});

const rows = async (text: string) => (await client.query(text)).rows;

test('gifts designated by fund_id become one designation each; nothing is lost, and down gives fund_id back', async () => {
  const files = (await readdir(migrationsDir)).filter((file) => file.endsWith('.sql')).sort();
  const before = files.indexOf(`${MIGRATION}.sql`);
  expect(before).toBeGreaterThan(0);
  await migrate('up', before);
  expect(await rows(`SELECT name FROM pgmigrations ORDER BY id`)).toHaveLength(before);

  await client.query(`
    INSERT INTO institutions (name, currency) VALUES ('Old College', 'USD'), ('Other', 'EUR');
    INSERT INTO funds (institution_id, name, code, restriction, endowed, status)
      VALUES (1, 'General', 'GEN', 'unrestricted', false, 'active'),
             (1, 'Library', 'LIB', 'unrestricted', false, 'closed'),
             (2, 'Theirs', 'GEN', 'unrestricted', false, 'active');
    INSERT INTO donors (institution_id, role, first_name, last_name, status, gives_anonymously)
      VALUES (1, 'Individual', 'Ada', 'Lovelace', 'active', false),
             (2, 'Individual', 'Bo', 'Other', 'active', false);
    INSERT INTO gifts (institution_id, donor_id, amount, currency, subject, gift_date, type,
                       check_number, fund_id)
      VALUES (1, 1, 100.25, 'USD', 'To general', '2024-02-29', 'check', '77', 1),
             (1, 1, 0.01, 'USD', 'To a closed fund', '2025-01-01', 'cash', NULL, 2),
             (1, 1, 999999999999.99, 'USD', 'Undesignated', '2026-01-01', 'stock', NULL, NULL),
             (2, 2, 5, 'EUR', 'Theirs', '2026-03-01', 'cash', NULL, 3);`);
  const old = await rows(`
    SELECT id, institution_id, donor_id, amount::text, currency, subject, gift_date::text, type,
           check_number, created_at, updated_at
    FROM gifts ORDER BY id`);

  // Only the money record: the down step below must undo it, not a later migration.
  await migrate('up', 1);
  const migrated = await rows(`
    SELECT id, institution_id, donor_id, amount::text, currency, subject, gift_date::text, type,
           check_number, created_at, updated_at
    FROM gifts ORDER BY id`);
  expect(migrated).toEqual(old);
  expect(
    await rows(`
      SELECT id, designations, fund_ids, soft_credits, status, amount_refunded::text,
             benefit_amount::text, matches_gift_id
      FROM gifts ORDER BY id`),
  ).toEqual([
    {
      id: '1',
      designations: [{ fund_id: 1, amount: 100.25, amount_refunded: 0 }],
      fund_ids: ['1'],
      soft_credits: [],
      status: 'posted',
      amount_refunded: '0.00',
      benefit_amount: '0.00',
      matches_gift_id: null,
    },
    {
      id: '2',
      designations: [{ fund_id: 2, amount: 0.01, amount_refunded: 0 }],
      fund_ids: ['2'],
      soft_credits: [],
      status: 'posted',
      amount_refunded: '0.00',
      benefit_amount: '0.00',
      matches_gift_id: null,
    },
    {
      id: '3',
      designations: [],
      fund_ids: [],
      soft_credits: [],
      status: 'posted',
      amount_refunded: '0.00',
      benefit_amount: '0.00',
      matches_gift_id: null,
    },
    {
      id: '4',
      designations: [{ fund_id: 3, amount: 5, amount_refunded: 0 }],
      fund_ids: ['3'],
      soft_credits: [],
      status: 'posted',
      amount_refunded: '0.00',
      benefit_amount: '0.00',
      matches_gift_id: null,
    },
  ]);
  // The exact amount survives the trip through jsonb: fund totals read it as numeric.
  expect(
    await rows(`
      SELECT (designations -> 0 ->> 'amount')::numeric = amount AS exact FROM gifts
      WHERE designations <> '[]' ORDER BY id`),
  ).toEqual([{ exact: true }, { exact: true }, { exact: true }]);
  expect(
    await rows(`SELECT column_name FROM information_schema.columns
    WHERE table_name = 'gifts' AND column_name = 'fund_id'`),
  ).toEqual([]);

  await migrate('down', 1);
  expect(await rows(`SELECT id, fund_id, amount::text FROM gifts ORDER BY id`)).toEqual([
    { id: '1', fund_id: '1', amount: '100.25' },
    { id: '2', fund_id: '2', amount: '0.01' },
    { id: '3', fund_id: null, amount: '999999999999.99' },
    { id: '4', fund_id: '3', amount: '5.00' },
  ]);
  await migrate('up');
  // Later migrations add to a designation (its base amounts), and keep what this one made.
  expect((await rows(`SELECT designations FROM gifts WHERE id = 1`))[0]).toEqual({
    designations: [
      {
        fund_id: 1,
        amount: 100.25,
        amount_refunded: 0,
        base_amount: 100.25,
        base_amount_refunded: 0,
      },
    ],
  });
});
