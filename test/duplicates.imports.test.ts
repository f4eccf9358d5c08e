// Donor imports report each written row's duplicate candidates (constituents.md §5): the pairs
// come from the same triggers as every other donor write, here through an import's batched
// inserts; a candidate is not an error.
import { sql } from 'slonik';
import { startTestService, type Tenant, type TestService } from './helpers/harness.js';
import { settled, upload } from './helpers/imports.js';
import { created } from './helpers/responses.js';

interface Candidate {
  object: string;
  donor_id: number;
  pair_id: number;
  score: number;
  matched_on: string[];
}

interface RowDuplicates {
  object: string;
  row: number;
  donor_id: number;
  candidates: Candidate[];
}

let service: TestService;
let other: Tenant;

beforeAll(async () => {
  service = await startTestService();
  other = await service.createTenant('Other College', 'USD');
});

afterAll(async () => {
  await service?.close();
});

async function rowDuplicates(importId: number, key?: string) {
  const rows: RowDuplicates[] = [];
  let url: string | null = `/api/v1/imports/${importId}/duplicates?limit=1`;
  while (url) {
    const page: { status: number; body: { data: RowDuplicates[]; next_cursor: string | null } } =
      await service.call('GET', url, { key });
    expect(page.status).toBe(200);
    rows.push(...page.body.data);
    url = page.body.next_cursor
      ? `/api/v1/imports/${importId}/duplicates?limit=1&starting_after=${page.body.next_cursor}`
      : null;
  }
  return rows;
}

const donorIdOf = async (email: string) =>
  Number(await service.db.oneFirst(sql.unsafe`SELECT id FROM donors WHERE email = ${email}`));

test('each donor row written with candidates is listed in file order with its candidates as they are now; the rows are not errors', async () => {
  const existing = (
    await created<{ id: number }>(
      service.call('POST', '/api/v1/donors', {
        body: {
          role: 'Individual',
          first_name: 'Rosa',
          last_name: 'Parks',
          email: 'rosa@example.org',
          phone: '555 0100',
        },
      }),
    )
  ).id;
  const csv = [
    'role,first_name,last_name,email,phone',
    'Individual,Rosa,Parks,rosa.p@example.org,(555) 0100',
    'Individual,Una,Alone,una@example.org,',
    'Individual,ROSA, parks ,rp@example.org,',
    'Organization,,,org@example.org,',
  ].join('\n');
  // The organization row lacks its name: it fails, and only it.
  const answer = await upload(service, 'resource=donors', csv);
  expect(answer.status).toBe(202);
  expect(await settled(service, answer.body.id)).toMatchObject({
    status: 'completed',
    rows_succeeded: 3,
    rows_failed: 1,
  });
  const [second, fourth] = [
    await donorIdOf('rosa.p@example.org'),
    await donorIdOf('rp@example.org'),
  ];

  const listed = await rowDuplicates(answer.body.id);
  expect(listed.map(({ object, row, donor_id }) => [object, row, donor_id])).toEqual([
    ['import_row_duplicates', 2, second],
    ['import_row_duplicates', 4, fourth],
  ]);
  const scores = (candidates: Candidate[]) =>
    candidates.map(({ donor_id, score, matched_on }) => ({ donor_id, score, matched_on }));
  expect(scores(listed[0]!.candidates)).toEqual([
    { donor_id: existing, score: 80, matched_on: ['name', 'phone'] },
    { donor_id: fourth, score: 50, matched_on: ['name'] },
  ]);
  expect(scores(listed[1]!.candidates)).toEqual(
    expect.arrayContaining([
      { donor_id: existing, score: 50, matched_on: ['name'] },
      { donor_id: second, score: 50, matched_on: ['name'] },
    ]),
  );
  expect(listed[1]!.candidates).toHaveLength(2);

  // Read as they are now: a dismissed pair leaves the row's candidates.
  const pairId = listed[0]!.candidates[1]!.pair_id;
  const dismissed = await service.call('POST', `/api/v1/duplicates/${pairId}/dismiss`, {
    body: { reason: 'Cousins' },
  });
  expect(dismissed.status).toBe(200);
  expect(scores((await rowDuplicates(answer.body.id))[0]!.candidates)).toEqual([
    { donor_id: existing, score: 80, matched_on: ['name', 'phone'] },
  ]);

  // Another institution's import is as absent as a missing one.
  const foreign = await service.call('GET', `/api/v1/imports/${answer.body.id}/duplicates`, {
    key: other.key,
  });
  expect(foreign.status).toBe(404);
});

test('a dry run writes no donor, so it lists no row', async () => {
  const csv = [
    'role,first_name,last_name,email',
    'Individual,Rosa,Parks,rosa.dry@example.org',
  ].join('\n');
  const answer = await upload(service, 'resource=donors&dry_run=true', csv);
  expect(answer.status).toBe(202);
  expect(await settled(service, answer.body.id)).toMatchObject({ status: 'validated' });
  expect(await rowDuplicates(answer.body.id)).toEqual([]);
});
