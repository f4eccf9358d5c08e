/**
 * What the scholarshipLists.*.test.ts files share. GET /award-cycles, /students, /scholarships and
 * /awards: newest first, the institution's own rows only, each list's filters (product.md §4),
 * invalid values, filters pinned in the cursor and ids of another institution.
 */
import { sql } from 'slonik';
import { startTestService, type ApiResponse, type Tenant, type TestService } from './harness.js';

export interface Row {
  id: number;
  object: string;
  [field: string]: unknown;
}
export interface Page {
  object: string;
  url: string;
  has_more: boolean;
  next_cursor: string | null;
  previous_cursor: string | null;
  data: Row[];
}
export interface ErrorBody {
  error: { type: string; code: string; param?: string; message: string };
}

export let service: TestService;
export let other: Tenant;

/** Ids made in beforeAll, by name. */
export const id = {
  stem: 0,
  arts: 0,
  fall: 0,
  spring: 0,
  past: 0,
  discarded: 0,
  ada: 0,
  alan: 0,
  grace: 0,
  stemExcellence: 0,
  stemRetired: 0,
  artsPrize: 0,
  adaFall: 0,
  alanFall: 0,
  gracePast: 0,
  adaPast: 0,
};
/** The other institution's ids. */
export const foreign = { fund: 0, cycle: 0, student: 0, scholarship: 0, award: 0 };

async function create(path: string, body: Record<string, unknown>, key?: string): Promise<number> {
  const response = await service.call<{ id: number }>('POST', `/api/v1${path}`, { body, key });
  if (response.status !== 201)
    throw new Error(`POST ${path}: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body.id;
}

export async function patch(
  path: string,
  body: Record<string, unknown>,
  key?: string,
): Promise<void> {
  const response = await service.call('PATCH', `/api/v1${path}`, { body, key });
  if (response.status !== 200)
    throw new Error(`PATCH ${path}: ${response.status} ${JSON.stringify(response.body)}`);
}

export const get = <T = Page>(path: string, key?: string): Promise<ApiResponse<T>> =>
  service.call<T>('GET', `/api/v1${path}`, key ? { key } : {});

export const query = (params: Record<string, string | number>) =>
  new URLSearchParams(
    Object.entries(params).map(([name, value]): [string, string] => [name, String(value)]),
  ).toString();

export const idsOf = (page: Page) => page.data.map((row) => row.id);

/** The ids of an institution's rows of a table, newest first: what an unfiltered list shows. */
export async function storedIds(table: string, institutionId: number): Promise<number[]> {
  const rows = await service.db.anyFirst(sql.unsafe`
    SELECT id FROM ${sql.identifier([table])} WHERE institution_id = ${institutionId}
    ORDER BY id DESC`);
  return rows.map(Number);
}

/** Every page of a list, forward from the first request, at `limit`. */
export async function walk(path: string, params: Record<string, string | number>, limit: number) {
  const pages: Page[] = [];
  let response = await get(`${path}?${query({ ...params, limit })}`);
  for (;;) {
    expect(response.status).toBe(200);
    pages.push(response.body);
    if (!response.body.next_cursor) break;
    response = await get(`${path}?${query({ limit, starting_after: response.body.next_cursor })}`);
  }
  return pages;
}

/** Starts the file's own service and creates the rows above; call once at the top of a test file. */
export function setUpListTests(): void {
  beforeAll(async () => {
    service = await startTestService();
    other = await service.createTenant('Other College');

    id.stem = await create('/funds', { name: 'STEM Endowment', code: 'STEM-END' });
    id.arts = await create('/funds', { name: 'Arts Fund', code: 'ARTS' });

    // Cycles in every status: draft, open, closed (open -> closed), archived (draft -> archived).
    id.fall = await create('/award-cycles', {
      name: 'Fall 2026',
      starts_on: '2026-09-01',
      ends_on: '2026-12-31',
      status: 'open',
    });
    id.spring = await create('/award-cycles', {
      name: 'Spring 2027',
      starts_on: '2027-01-01',
      ends_on: '2027-05-31',
    });
    id.past = await create('/award-cycles', {
      name: 'Fall 2025',
      starts_on: '2025-09-01',
      ends_on: '2025-12-31',
      status: 'open',
    });
    id.discarded = await create('/award-cycles', {
      name: 'Discarded 100% draft_cycle',
      starts_on: '2026-01-01',
      ends_on: '2026-01-31',
    });

    id.ada = await create('/students', {
      student_number: 'S-1001',
      first_name: 'Ada',
      last_name: 'Lovelace',
      email: 'ada@example.edu',
    });
    id.alan = await create('/students', {
      student_number: 'S-1002',
      first_name: 'Alan',
      last_name: 'Turing',
    });
    id.grace = await create('/students', {
      student_number: 'G-77',
      first_name: 'Grace',
      last_name: 'Hopper',
      email: 'amazing.grace@navy.example',
    });

    id.stemExcellence = await create('/scholarships', {
      name: 'STEM Excellence',
      fund_id: id.stem,
    });
    id.stemRetired = await create('/scholarships', { name: 'Old STEM Prize', fund_id: id.stem });
    id.artsPrize = await create('/scholarships', { name: 'Arts Prize', fund_id: id.arts });

    id.adaFall = await create('/awards', {
      award_cycle_id: id.fall,
      scholarship_id: id.stemExcellence,
      student_id: id.ada,
      amount: 2500,
    });
    id.alanFall = await create('/awards', {
      award_cycle_id: id.fall,
      scholarship_id: id.artsPrize,
      student_id: id.alan,
      amount: 1000,
    });
    id.gracePast = await create('/awards', {
      award_cycle_id: id.past,
      scholarship_id: id.stemExcellence,
      student_id: id.grace,
      amount: 750.5,
    });
    id.adaPast = await create('/awards', {
      award_cycle_id: id.past,
      scholarship_id: id.artsPrize,
      student_id: id.ada,
      amount: 300,
    });
    await patch(`/awards/${id.adaFall}`, { status: 'accepted' });
    await patch(`/awards/${id.alanFall}`, { status: 'declined' });
    await patch(`/awards/${id.gracePast}`, { status: 'accepted' });
    await patch(`/awards/${id.gracePast}`, { status: 'disbursed' });

    // Statuses set after the awards that need them: a retired scholarship and a closed cycle
    // take no new awards.
    await patch(`/scholarships/${id.stemRetired}`, { status: 'retired' });
    await patch(`/award-cycles/${id.past}`, { status: 'closed' });
    await patch(`/award-cycles/${id.discarded}`, { status: 'archived' });

    // The other institution: names that match this institution's filters, too.
    const key = other.key;
    foreign.fund = await create('/funds', { name: 'STEM Endowment', code: 'STEM-END' }, key);
    foreign.cycle = await create(
      '/award-cycles',
      { name: 'Fall 2026', starts_on: '2026-09-01', ends_on: '2026-12-31', status: 'open' },
      key,
    );
    foreign.student = await create(
      '/students',
      { student_number: 'S-1001', first_name: 'Ada', last_name: 'Lovelace' },
      key,
    );
    foreign.scholarship = await create(
      '/scholarships',
      { name: 'STEM Excellence', fund_id: foreign.fund },
      key,
    );
    foreign.award = await create(
      '/awards',
      {
        award_cycle_id: foreign.cycle,
        scholarship_id: foreign.scholarship,
        student_id: foreign.student,
        amount: 99,
      },
      key,
    );
  });

  afterAll(async () => {
    await service?.close();
  });
}
