// Duplicate matching under concurrent writes (migration 1735100000000, lock_match_keys): two
// transactions writing donors that share a key see each other's keys before they look for pairs,
// whether each writes a few keys (a create: a lock per key) or many (an import's chunk: its
// buckets, exclusively); and two creates of unrelated donors do not wait for each other, even
// when their keys fall in one bucket.
import pg from 'pg';
import { sql } from 'slonik';
import { startTestService, type Tenant, type TestService } from './helpers/harness.js';
import { waitFor } from './helpers/wait.js';

let service: TestService;
let tenant: Tenant;
let counter = 0;

beforeAll(async () => {
  service = await startTestService();
  tenant = await service.createTenant('Locks College', 'USD');
});

afterAll(async () => {
  await service?.close();
});

/** A transaction of its own, on a connection of its own (never through a pooler). */
async function session(): Promise<{ client: pg.Client; pid: number }> {
  const client = new pg.Client({
    connectionString: service.config.DATABASE_MIGRATION_URL ?? service.config.DATABASE_URL,
  });
  await client.connect();
  const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
  await client.query('BEGIN');
  return { client, pid: rows[0]!.pid };
}

/** Inserts Individuals by last name (one statement, as an import's chunk); their ids in order. */
async function insert(client: pg.Client, lastNames: string[]): Promise<number[]> {
  const { rows } = await client.query<{ id: string }>(
    `INSERT INTO donors (institution_id, role, first_name, last_name, status, gives_anonymously)
     SELECT $1, 'Individual', 'Kit', name, 'active', false
     FROM unnest($2::text[]) WITH ORDINALITY AS n (name, position) ORDER BY position
     RETURNING id`,
    [tenant.institutionId, lastNames],
  );
  return rows.map((row) => Number(row.id));
}

/** Whether the session waits on an advisory lock. */
const waiting = async (pid: number) =>
  Number(
    await service.db.oneFirst(sql.unsafe`
    SELECT count(*)::int FROM pg_locks
    WHERE pid = ${pid} AND locktype = 'advisory' AND NOT granted`),
  ) > 0;

/** `count` last names: the shared one first, then names no other donor has. */
const names = (shared: string, count: number) => [
  shared,
  ...Array.from({ length: count - 1 }, () => `Solo ${++counter}`),
];

async function pairExists(a: number, b: number): Promise<boolean> {
  return (
    Number(
      await service.db.oneFirst(sql.unsafe`
      SELECT count(*)::int FROM duplicate_pairs
      WHERE institution_id = ${tenant.institutionId}
        AND donor_id = ${Math.min(a, b)} AND other_donor_id = ${Math.max(a, b)}`),
    ) === 1
  );
}

test.each([
  ['a create, then a create', 1, 1],
  ['an import chunk, then a create', 70, 1],
  ['a create, then an import chunk', 1, 70],
  ['an import chunk, then an import chunk', 70, 70],
])(
  '%s of namesakes, both in flight: the later waits for the earlier, then pairs with it',
  async (_label, firstCount, secondCount) => {
    const shared = `Namesake ${++counter}`;
    const first = await session();
    const second = await session();
    try {
      const [earlier] = await insert(first.client, names(shared, firstCount));
      const later = insert(second.client, names(shared, secondCount));
      await waitFor(() => waiting(second.pid), 5_000, 'the later insert to wait on a lock');
      await first.client.query('COMMIT');
      const [laterId] = await later;
      await second.client.query('COMMIT');
      expect(await pairExists(earlier!, laterId!)).toBe(true);
    } finally {
      await Promise.all([first.client.end(), second.client.end()]);
    }
  },
);

test('two creates of unrelated donors whose keys share a bucket do not wait for each other', async () => {
  // Two last names whose name keys fall in one bucket of 256 (the bucket of 1735030000).
  const bucketOf = (name: string) =>
    sql.fragment`abs(hashtext(${tenant.institutionId}::text || 'name' || ${`kit|${name}`}) % 256)`;
  const stem = `Bucket ${++counter}`;
  const other = String(
    await service.db.oneFirst(sql.unsafe`
    SELECT candidate FROM (SELECT ${stem} || ' ' || n AS candidate FROM generate_series(1, 5000) AS n) AS c
    WHERE abs(hashtext(${tenant.institutionId}::text || 'name' || 'kit|' || lower(candidate)) % 256)
      = ${bucketOf(stem.toLowerCase())}
    LIMIT 1`),
  );
  const first = await session();
  const second = await session();
  try {
    await insert(first.client, [stem]);
    // Were it to lock the bucket rather than its key, it would wait for the first's commit: it
    // fails instead.
    await second.client.query("SET LOCAL lock_timeout = '2s'");
    await expect(insert(second.client, [other])).resolves.toHaveLength(1);
    await Promise.all([first.client.query('COMMIT'), second.client.query('COMMIT')]);
  } finally {
    await Promise.all([first.client.end(), second.client.end()]);
  }
});
