// Duplicate matching's pair search has one plan whatever the statistics (migration
// 1735130000000): a create reads its own keys and their matches, not the institution's keys, in
// a session that planned the trigger's statements while donor_match_keys was small and had never
// been analysed, and kept those plans as it grew. Such a table is made here as a temporary table
// of the same definition, which the session's statements then read in place of the real one
// (a temporary table comes first on the search path, and is never analysed): the same indexes,
// the real triggers and functions, nothing left behind (rolled back).
import pg from 'pg';
import { startTestService, type Tenant, type TestService } from './helpers/harness.js';

let service: TestService;
let tenant: Tenant;
let counter = 0;

beforeAll(async () => {
  service = await startTestService();
  tenant = await service.createTenant('Plans College', 'USD');
});

afterAll(async () => {
  await service?.close();
});

/** A session of its own, in a transaction, whose donor_match_keys is an empty copy. */
async function sessionWithFreshKeys(): Promise<pg.Client> {
  const client = new pg.Client({
    connectionString: service.config.DATABASE_MIGRATION_URL ?? service.config.DATABASE_URL,
  });
  await client.connect();
  await client.query('BEGIN');
  await client.query(
    'CREATE TEMP TABLE donor_match_keys (LIKE public.donor_match_keys) ON COMMIT DROP',
  );
  // Its indexes in the order the migrations made them, as a migrated database has them.
  await client.query(`DO $$ DECLARE definition text; BEGIN
    FOR definition IN
      SELECT replace(pg_get_indexdef(indexrelid), 'ON public.donor_match_keys',
                     'ON pg_temp.donor_match_keys')
      FROM pg_index WHERE indrelid = 'public.donor_match_keys'::regclass ORDER BY indexrelid
    LOOP EXECUTE definition; END LOOP; END $$`);
  return client;
}

/** Inserts Individuals in one statement (as an import's chunk does), with a phone and lists. */
async function insert(client: pg.Client, count: number): Promise<void> {
  const stem = `Plan ${++counter}`;
  await client.query(
    `INSERT INTO donors (institution_id, role, first_name, last_name, phone, status,
                         gives_anonymously, emails, phones)
     SELECT $1, 'Individual', 'Kit', $2 || ' ' || n, '+44 20 7946 0000', 'active', false,
       jsonb_build_array(jsonb_build_object('address', $2 || '.' || n || '@home.example.org',
                                            'type', 'home', 'status', 'active'),
                         jsonb_build_object('address', $2 || '.' || n || '@work.example.org',
                                            'type', 'work', 'status', 'active')),
       '[{"number": "+44 7700 900000", "type": "mobile", "status": "active"}]'
     FROM generate_series(1, $3::int) AS n`,
    [tenant.institutionId, stem, count],
  );
}

/** Rows of donor_match_keys the session has read, through its indexes or by scanning it. */
async function keysRead(client: pg.Client): Promise<number> {
  const { rows } = await client.query<{ read: string }>(
    `SELECT sum(pg_stat_get_xact_tuples_returned(oid)) AS read FROM pg_class
     WHERE oid = 'pg_temp.donor_match_keys'::regclass
        OR oid IN (SELECT indexrelid FROM pg_index
                   WHERE indrelid = 'pg_temp.donor_match_keys'::regclass)`,
  );
  return Number(rows[0]!.read);
}

test.each([
  ['a chunk of 1,000 donors', 1000, 0],
  ['one donor, among 1,000 of an earlier chunk', 1, 1000],
])(
  'a session whose first write was %s, with no statistics, then reads only its own matches',
  async (_label, firstWrite, before) => {
    const client = await sessionWithFreshKeys();
    try {
      // Keys there before the first plan, written around the session's plans.
      if (before)
        await client.query(
          `INSERT INTO pg_temp.donor_match_keys (institution_id, donor_id, role_class, basis, value)
           SELECT $1, -n, 'individual', 'name', 'kit|earlier ' || n
           FROM generate_series(1, $2::int) AS n`,
          [tenant.institutionId, before],
        );
      await insert(client, firstWrite);
      // The table grows well past the size the session planned for.
      await insert(client, 4000);
      const start = await keysRead(client);
      await insert(client, 1);
      // A create of 5 keys (a name, two emails, two phones) reads each key of its own and each
      // key's matches (none), twice over at most: never the institution's 20,000 or more.
      expect((await keysRead(client)) - start).toBeLessThan(50);
    } finally {
      await client.query('ROLLBACK');
      await client.end();
    }
  },
);
