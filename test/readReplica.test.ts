import { sql } from 'slonik';
import { z } from 'zod';
import { startTestService, type TestService } from './helpers/harness.js';
import { created } from './helpers/responses.js';

/**
 * DATABASE_READ_URL (docs/scaling.md, "Read replicas"): lists and retrievals read from it, while
 * writes, dry runs and their checks stay on DATABASE_URL. The "replica" here is another database
 * that holds a deliberately different row, so that an answer shows which database it came from.
 * Both databases are fresh clones of one template, so their first institution has the same id.
 */
interface Page {
  data: { id: number; last_name: string }[];
}

let replica: TestService;
let primary: TestService;

const donor = (lastName: string) => ({
  role: 'Individual',
  first_name: 'Ada',
  last_name: lastName,
  email: `${lastName.toLowerCase()}@example.org`,
});
const lastNames = (service: TestService) =>
  service.db.anyFirst(sql.type(z.object({ last_name: z.string() }))`
    SELECT last_name FROM donors WHERE institution_id = ${service.tenant.institutionId}
    ORDER BY id`);

beforeAll(async () => {
  replica = await startTestService();
  primary = await startTestService({ DATABASE_READ_URL: replica.config.DATABASE_URL });
  // The precondition of the whole file: the same institution id in both databases.
  expect(primary.tenant.institutionId).toBe(replica.tenant.institutionId);
  await created(replica.call('POST', '/api/v1/donors', { body: donor('OnTheReplica') }));
});

afterAll(async () => {
  await primary?.close();
  await replica?.close();
});

test('a write lands on the primary, and lists and retrievals answer from the read database', async () => {
  const written = await created<{ id: number }>(
    primary.call('POST', '/api/v1/donors', { body: donor('OnThePrimary') }),
  );
  expect(await lastNames(primary)).toEqual(['OnThePrimary']);
  expect(await lastNames(replica)).toEqual(['OnTheReplica']);

  const list = await primary.call<Page>('GET', '/api/v1/donors');
  expect(list.status).toBe(200);
  expect(list.body.data.map((row) => row.last_name)).toEqual(['OnTheReplica']);
  // Read-your-writes does not hold across databases: the replica has not got the write.
  const [replicaRow] = list.body.data;
  const retrieved = await primary.call<{ last_name: string }>(
    'GET',
    `/api/v1/donors/${replicaRow!.id}`,
  );
  expect(retrieved.status).toBe(200);
  expect(retrieved.body.last_name).toBe('OnTheReplica');
  if (written.id !== replicaRow!.id)
    expect((await primary.call('GET', `/api/v1/donors/${written.id}`)).status).toBe(404);
});

test('an update checks and writes the primary, whatever the read database holds', async () => {
  const [onPrimary] = await primary.db.anyFirst(sql.type(z.object({ id: z.number() }))`
    SELECT id FROM donors WHERE institution_id = ${primary.tenant.institutionId}
      AND last_name = 'OnThePrimary'`);
  const dryRun = await primary.call<{ last_name: string }>(
    'PATCH',
    `/api/v1/donors/${onPrimary!}?dry_run=true`,
    { body: { last_name: 'Renamed' } },
  );
  expect(dryRun.status).toBe(200);
  expect(dryRun.body.last_name).toBe('Renamed');
  const updated = await primary.call<{ last_name: string }>(
    'PATCH',
    `/api/v1/donors/${onPrimary!}`,
    { body: { last_name: 'Renamed' } },
  );
  expect(updated.status).toBe(200);
  expect(await lastNames(primary)).toEqual(['Renamed']);
  expect(await lastNames(replica)).toEqual(['OnTheReplica']);
});

test('without DATABASE_READ_URL a list reads the database it writes to: a create is listed at once', async () => {
  expect(replica.config.DATABASE_READ_URL).toBeUndefined();
  const written = await created<{ id: number }>(
    replica.call('POST', '/api/v1/donors', { body: donor('Listed') }),
  );
  const list = await replica.call<Page>('GET', '/api/v1/donors');
  expect(list.body.data.map((row) => row.last_name)).toEqual(['Listed', 'OnTheReplica']);
  expect((await replica.call('GET', `/api/v1/donors/${written.id}`)).status).toBe(200);
});
