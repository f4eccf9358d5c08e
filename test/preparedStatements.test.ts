import { sql } from 'slonik';
import { z } from 'zod';
import { createDatabasePool } from '../common/db/pool.js';
import { PreparedStatements } from '../common/db/preparedStatements.js';
import { writeEventOf } from '../common/events/outbox.js';
import { insertWithReceipts, type ReceiptedCreate } from '../common/idempotency/receipts.js';
import { createGift } from '../common/resources/gifts/commands.js';
import { createLogger } from '../common/logger.js';
import { startTestService, type TestService } from './helpers/harness.js';
import { newDonor } from './helpers/singleStatement.js';
import { writeJobFor } from './helpers/writeJob.js';

/**
 * The worker's group-commit statement (DATABASE_PREPARED_STATEMENTS, on by default) is a named
 * statement, prepared once per connection whatever the number of creates, so that Postgres does
 * not plan it on every execution; off, nothing is prepared. Behind a PgBouncer that cannot keep
 * prepared statements the worker finds out and stops naming them (CI's PgBouncer pass runs the
 * whole suite that way).
 */

let service: TestService;
let donorId: number;

/** A gift create as the worker commits it: the command's single statement and its receipt. */
function giftCreate(subject: string): ReceiptedCreate {
  const job = writeJobFor(
    service.tenant,
    createGift,
    { donor_id: donorId, amount: 12, subject, gift_date: '2026-07-01' },
    subject,
  );
  const create = createGift.singleStatement!(
    { institution: job.institution, dryRun: false, now: new Date().toISOString() },
    job.request,
  );
  if (!create) throw new Error('a plain gift should be one statement');
  return {
    create,
    apiKeyId: job.apiKeyId,
    receipt: { institutionId: job.institution.id, source: 'client', key: subject },
    fingerprint: job.fingerprint,
    ttlSeconds: 60,
    event: writeEventOf(createGift.name, job),
  };
}

const preparedNames = z.object({ name: z.string() });

beforeAll(async () => {
  service = await startTestService();
  donorId = (await newDonor(service)).id;
});
afterAll(async () => {
  await service?.close();
});

test.each([
  ['prepared: one named statement on the connection for batches of any size', true, 1],
  ['not prepared: none', false, 0],
])('%s', async (_label, prepared, statements) => {
  const subjects = [1, 2, 3, 4].map((n) => `${prepared ? 'prepared' : 'plain'}-${n}`);
  // A connection of its own, direct to the database (never through a pooler): nothing on it was
  // prepared before.
  const pool = await createDatabasePool(service.config.DATABASE_MIGRATION_URL!, {
    maxPoolSize: 1,
    applicationName: 'dgs-test-prepared',
  });
  await pool.connect(async (connection) => {
    const first = await insertWithReceipts(connection, [giftCreate(subjects[0]!)], { prepared });
    const next = await insertWithReceipts(connection, subjects.slice(1).map(giftCreate), {
      prepared,
    });
    expect([...first, ...next].map((outcome) => outcome?.status)).toEqual([201, 201, 201, 201]);
    const names = await connection.anyFirst(
      sql.type(preparedNames)`SELECT name FROM pg_prepared_statements`,
    );
    expect(names).toHaveLength(statements);
    for (const name of names) expect(name).toMatch(/^dgs_creates_[0-9a-f]{24}$/);
  });
  await pool.end();
  const stored = await service.db.anyFirst(sql.unsafe`
    SELECT subject FROM gifts WHERE subject = ANY(${sql.array(subjects, 'text')}) ORDER BY subject`);
  expect(stored).toEqual(subjects);
});

test('a named statement lost as a pooler loses it is sent again unnamed, and none is named after, with one warning', async () => {
  const warnings: string[] = [];
  const logger = createLogger('warn');
  logger.warn = ((_fields: unknown, message: string) => {
    warnings.push(message);
  }) as typeof logger.warn;
  const statements = new PreparedStatements(true, logger);
  // One connection, so that each statement below meets what the one before left on it.
  const pool = await createDatabasePool(service.config.DATABASE_MIGRATION_URL!, {
    maxPoolSize: 1,
    applicationName: 'dgs-test-prepared',
  });
  const insert = (subject: string) =>
    statements.run((prepared) => insertWithReceipts(pool, [giftCreate(subject)], { prepared }));
  const prepared = () =>
    pool.anyFirst(sql.type(preparedNames)`SELECT name FROM pg_prepared_statements`);
  try {
    expect((await insert('lost-1'))[0]?.status).toBe(201);
    expect(await prepared()).toHaveLength(1);
    // What a pooler does: the next server connection knows nothing of the name.
    await pool.query(sql.unsafe`DEALLOCATE ALL`);
    expect((await insert('lost-2'))[0]?.status).toBe(201);
    expect((await insert('lost-3'))[0]?.status).toBe(201);
    expect(await prepared()).toEqual([]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^prepared statements do not survive this database connection/);
  } finally {
    await pool.end();
  }
  const stored = await service.db.anyFirst(sql.unsafe`
    SELECT subject FROM gifts WHERE subject LIKE 'lost-%' ORDER BY subject`);
  expect(stored).toEqual(['lost-1', 'lost-2', 'lost-3']);
});
