// Imports are started fair across institutions: one institution's many imports cannot starve
// another's later one (README, "Imports" under operating notes).
import { startTestService, type TestService, type Tenant } from './helpers/harness.js';
import { settled, upload, type ImportBody } from './helpers/imports.js';
import { waitFor } from './helpers/wait.js';

let service: TestService;
let other: Tenant;

beforeAll(async () => {
  // One chunk at a time, of one row: each import is a long run of small jobs.
  service = await startTestService({ IMPORT_CONCURRENCY: '1', IMPORT_CHUNK_ROWS: '1' });
  other = await service.createTenant('Other College', 'USD');
});

afterAll(async () => {
  await service?.close();
});

const donorsCsv = (prefix: string, rows: number) =>
  [
    'external_id,role,first_name,last_name',
    ...Array.from({ length: rows }, (_, index) => `${prefix}-${index},Individual,Ada,Lovelace`),
  ].join('\n');

const statusOf = async (id: number, key?: string) =>
  (await service.call<ImportBody>('GET', `/api/v1/imports/${id}`, { key })).body.status;

test("an institution's later import starts while another's many imports are under way", async () => {
  const ofA: number[] = [];
  for (let index = 0; index < 4; index++) {
    const answer = await upload(service, 'resource=donors', donorsCsv(`A${index}`, 200));
    expect(answer.status).toBe(202);
    ofA.push(answer.body.id);
  }
  await waitFor(async () => (await statusOf(ofA[0]!)) !== 'queued', 10_000, "A's first import");

  const answer = await upload(service, 'resource=donors', donorsCsv('B', 1), { key: other.key });
  expect(answer.status).toBe(202);
  const ofB = await settled(service, answer.body.id, other.key, 30_000);
  expect(ofB).toMatchObject({ status: 'completed', rows_succeeded: 1 });

  // When B's is done, A's first two are still under way and its last two wait their turn.
  const statuses = await Promise.all(ofA.map((id) => statusOf(id)));
  console.log(`A's imports when B's completed: ${statuses.join(', ')}`);
  expect(statuses.slice(0, 2).every((status) => ['validating', 'importing'].includes(status))).toBe(
    true,
  );
  expect(statuses.slice(2)).toEqual(['queued', 'queued']);
}, 60_000);
