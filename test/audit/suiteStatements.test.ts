import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { createDatabasePool } from '../../common/db/pool.js';
import { crossTenant, tenantTables, unscopedStatements } from '../helpers/statementAudit.js';

/**
 * The statement audit of a whole suite run. `.ci/run` loads pg_stat_statements into the system
 * PostgreSQL and runs the suite (through PgBouncer), the fault suite and the Redis Cluster pass
 * with the service logging in as a role of its own (STATEMENT_AUDIT_ROLE, `dgs_service`), the
 * tests' own set-up and assertions as `postgres`. This file runs last (`npm run
 * test:statements`) and reads back every distinct statement that role sent, in every test
 * database: each must name `institution_id` when it touches a tenant table, as the single-run
 * audit (test/statementAudit.test.ts) checks on one filled institution. PostgreSQL records
 * statements as they reached it, so this also covers what slonik's interceptor cannot see.
 */
const role = process.env.STATEMENT_AUDIT_ROLE;
let admin: DatabasePool;
let template: DatabasePool;

const databaseUrl = (database: string) => {
  const url = new URL(process.env.TEST_DATABASE_URL!);
  url.pathname = `/${database}`;
  return url.toString();
};

beforeAll(async () => {
  if (!role)
    throw new Error(
      'STATEMENT_AUDIT_ROLE is not set: this audit reads what an earlier suite run recorded (.ci/run sets it up).',
    );
  admin = await createDatabasePool(databaseUrl('postgres'), {
    maxPoolSize: 1,
    applicationName: 'dgs-test',
  });
  // The migrated template of this run: its tables say which hold tenants' records.
  template = await createDatabasePool(databaseUrl(process.env.TEST_TEMPLATE_DATABASE!), {
    maxPoolSize: 1,
    applicationName: 'dgs-test',
  });
});

afterAll(async () => {
  await template?.end();
  await admin?.end();
});

const recorded = z.object({ query: z.string(), databases: z.coerce.number() });

test('every statement the service sent in the whole run names institution_id on a tenant table', async () => {
  const loaded = await admin.maybeOneFirst(sql.unsafe`
    SELECT extname FROM pg_extension WHERE extname = 'pg_stat_statements'`);
  expect(loaded).toBe('pg_stat_statements');
  // Nothing was evicted for want of room: the record is whole.
  expect(
    Number(await admin.oneFirst(sql.unsafe`SELECT dealloc FROM pg_stat_statements_info`)),
  ).toBe(0);
  const rows = await admin.any(sql.type(recorded)`
    SELECT s.query, count(DISTINCT s.dbid) AS databases
    FROM pg_stat_statements s JOIN pg_roles r ON r.oid = s.userid
    WHERE r.rolname = ${role!}
    GROUP BY s.query`);
  const statements = rows.map((row) => row.query);
  const databases = Math.max(0, ...rows.map((row) => row.databases));

  // A whole run was recorded: many test databases, and statements from every corner of the
  // service (writes, lists, money, imports, webhooks, maintenance).
  expect(databases).toBeGreaterThan(50);
  const insertInto = (table: string) => new RegExp(`INSERT INTO "?${table}"?\\s`);
  const expected = [
    ...['gifts', 'donors', 'write_receipts', 'events', 'gift_refunds', 'receipts', 'pledges'].map(
      insertInto,
    ),
    ...['import_chunks', 'webhook_delivery_attempts', 'awards', 'scholarships'].map(insertInto),
    ...crossTenant.map(({ pattern }) => pattern),
  ];
  expect(
    expected.filter((sent) => !statements.some((statement) => sent.test(statement))).map(String),
  ).toEqual([]);

  expect(unscopedStatements(statements, await tenantTables(template))).toEqual([]);
});
