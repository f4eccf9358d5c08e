import { sql } from 'slonik';
import {
  startTestService,
  type ApiResponse,
  type Tenant,
  type TestService,
} from './helpers/harness.js';

/**
 * GET /award-cycles, /students, /scholarships and /awards: newest first, the institution's own
 * rows only, each list's filters (product.md §4), invalid values, filters pinned in the cursor
 * and ids of another institution.
 */

interface Row {
  id: number;
  object: string;
  [field: string]: unknown;
}
interface Page {
  object: string;
  url: string;
  has_more: boolean;
  next_cursor: string | null;
  previous_cursor: string | null;
  data: Row[];
}
interface ErrorBody {
  error: { type: string; code: string; param?: string; message: string };
}

let service: TestService;
let other: Tenant;

/** Ids made in beforeAll, by name. */
const id = {
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
const foreign = { fund: 0, cycle: 0, student: 0, scholarship: 0, award: 0 };

async function create(path: string, body: Record<string, unknown>, key?: string): Promise<number> {
  const response = await service.call<{ id: number }>('POST', `/api/v1${path}`, { body, key });
  if (response.status !== 201)
    throw new Error(`POST ${path}: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body.id;
}

async function patch(path: string, body: Record<string, unknown>, key?: string): Promise<void> {
  const response = await service.call('PATCH', `/api/v1${path}`, { body, key });
  if (response.status !== 200)
    throw new Error(`PATCH ${path}: ${response.status} ${JSON.stringify(response.body)}`);
}

const get = <T = Page>(path: string, key?: string): Promise<ApiResponse<T>> =>
  service.call<T>('GET', `/api/v1${path}`, key ? { key } : {});

const query = (params: Record<string, string | number>) =>
  new URLSearchParams(
    Object.entries(params).map(([name, value]): [string, string] => [name, String(value)]),
  ).toString();

const idsOf = (page: Page) => page.data.map((row) => row.id);

/** The ids of an institution's rows of a table, newest first: what an unfiltered list shows. */
async function storedIds(table: string, institutionId: number): Promise<number[]> {
  const rows = await service.db.anyFirst(sql.unsafe`
    SELECT id FROM ${sql.identifier([table])} WHERE institution_id = ${institutionId}
    ORDER BY id DESC`);
  return rows.map(Number);
}

/** Every page of a list, forward from the first request, at `limit`. */
async function walk(path: string, params: Record<string, string | number>, limit: number) {
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

  id.stemExcellence = await create('/scholarships', { name: 'STEM Excellence', fund_id: id.stem });
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

const lists = [
  { path: '/award-cycles', table: 'award_cycles', object: 'award_cycle' },
  { path: '/students', table: 'students', object: 'student' },
  { path: '/scholarships', table: 'scholarships', object: 'scholarship' },
  { path: '/awards', table: 'awards', object: 'award' },
];

describe('each list without filters', () => {
  test.each(lists)(
    'GET $path lists only the institution’s own rows, newest first, in the list envelope',
    async ({ path, table, object }) => {
      const response = await get(path);
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({
        object: 'list',
        url: `/api/v1${path}`,
        has_more: false,
        next_cursor: null,
        previous_cursor: null,
      });
      const expected = await storedIds(table, service.tenant.institutionId);
      expect(expected.length).toBeGreaterThan(1);
      expect(idsOf(response.body)).toEqual(expected);
      expect(response.body.data.every((row) => row.object === object)).toBe(true);

      const theirs = await get(path, other.key);
      expect(idsOf(theirs.body)).toEqual(await storedIds(table, other.institutionId));
    },
  );

  test('rows are presented as GET /{resource}/{id} presents them', async () => {
    for (const [path, rowId] of [
      ['/award-cycles', id.past],
      ['/students', id.ada],
      ['/scholarships', id.stemRetired],
      ['/awards', id.gracePast],
    ] as const) {
      const list = await get(path);
      const one = await get<Row>(`${path}/${rowId}`);
      expect(one.status).toBe(200);
      expect(list.body.data.find((row) => row.id === rowId)).toEqual(one.body);
    }
  });

  test('an award’s amount is a JSON number and dates come back as sent', async () => {
    const awards = await get('/awards');
    expect(awards.body.data.find((row) => row.id === id.gracePast)).toMatchObject({
      amount: 750.5,
      status: 'disbursed',
    });
    const cycles = await get('/award-cycles');
    expect(cycles.body.data.find((row) => row.id === id.spring)).toMatchObject({
      starts_on: '2027-01-01',
      ends_on: '2027-05-31',
      status: 'draft',
    });
  });
});

describe('filters', () => {
  /** path, parameters (ids as `<name>`, read when the test runs), expected ids */
  const cases: Array<[string, Record<string, string>, () => number[]]> = [
    ['/award-cycles', { status: 'open' }, () => [id.fall]],
    ['/award-cycles', { status: 'closed' }, () => [id.past]],
    ['/award-cycles', { status: 'archived' }, () => [id.discarded]],
    ['/award-cycles', { status: 'draft' }, () => [id.spring]],
    ['/award-cycles', { q: 'fall' }, () => [id.past, id.fall]],
    ['/award-cycles', { q: ' FALL 2026 ' }, () => [id.fall]],
    // % and _ are taken literally, not as LIKE wildcards.
    ['/award-cycles', { q: '100%' }, () => [id.discarded]],
    ['/award-cycles', { q: 'ft_c' }, () => [id.discarded]],
    ['/award-cycles', { q: 'F%l' }, () => []],
    ['/award-cycles', { q: 'fall', status: 'closed' }, () => [id.past]],
    ['/students', { q: 'lovelace' }, () => [id.ada]],
    ['/students', { q: 'ada love' }, () => [id.ada]],
    ['/students', { q: 's-100' }, () => [id.alan, id.ada]],
    ['/students', { q: 'G-77' }, () => [id.grace]],
    ['/students', { q: 'navy.example' }, () => [id.grace]],
    ['/students', { q: 'a' }, () => [id.grace, id.alan, id.ada]],
    ['/students', { q: 'Turing Hopper' }, () => []],
    ['/scholarships', { q: 'stem' }, () => [id.stemRetired, id.stemExcellence]],
    ['/scholarships', { fund_id: '<arts>' }, () => [id.artsPrize]],
    ['/scholarships', { status: 'retired' }, () => [id.stemRetired]],
    ['/scholarships', { fund_id: '<stem>', status: 'active' }, () => [id.stemExcellence]],
    ['/awards', { award_cycle_id: '<past>' }, () => [id.adaPast, id.gracePast]],
    ['/awards', { scholarship_id: '<stemExcellence>' }, () => [id.gracePast, id.adaFall]],
    ['/awards', { student_id: '<ada>' }, () => [id.adaPast, id.adaFall]],
    ['/awards', { status: 'declined' }, () => [id.alanFall]],
    ['/awards', { status: 'offered' }, () => [id.adaPast]],
    ['/awards', { status: 'cancelled' }, () => []],
    ['/awards', { award_cycle_id: '<fall>', student_id: '<ada>' }, () => [id.adaFall]],
    // A leading zero names the same id.
    ['/awards', { student_id: '0<alan>' }, () => [id.alanFall]],
  ];

  test.each(cases)('GET %s?%j', async (path, params, expected) => {
    const resolved = Object.fromEntries(
      Object.entries(params).map(([name, value]) => [
        name,
        value.replace(/<(\w+)>/, (_, key: string) => String(id[key as keyof typeof id])),
      ]),
    );
    const response = await get(`${path}?${query(resolved)}`);
    expect(response.status).toBe(200);
    expect(idsOf(response.body)).toEqual(expected());
  });

  const foreignCases: Array<[string, string, keyof typeof foreign]> = [
    ['/scholarships', 'fund_id', 'fund'],
    ['/awards', 'award_cycle_id', 'cycle'],
    ['/awards', 'scholarship_id', 'scholarship'],
    ['/awards', 'student_id', 'student'],
  ];
  test.each(foreignCases)(
    'GET %s?%s= another institution’s id is an empty page, not an error',
    async (path, filter, record) => {
      const response = await get(`${path}?${query({ [filter]: foreign[record] })}`);
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({
        has_more: false,
        next_cursor: null,
        previous_cursor: null,
        data: [],
      });
      // The same id is there for its own institution.
      const theirs = await get(`${path}?${query({ [filter]: foreign[record] })}`, other.key);
      expect(theirs.body.data.length).toBeGreaterThan(0);
    },
  );

  test('a filter naming an id that does not exist is an empty page', async () => {
    const response = await get(`/awards?${query({ student_id: 987654321 })}`);
    expect(response.status).toBe(200);
    expect(response.body.data).toEqual([]);
  });

  test('a q that matches only another institution’s rows is an empty page', async () => {
    await patch(`/students/${foreign.student}`, { last_name: 'Babbage' }, other.key);
    const response = await get(`/students?${query({ q: 'babbage' })}`);
    expect(response.status).toBe(200);
    expect(response.body.data).toEqual([]);
  });
});

describe('invalid filter values', () => {
  const cases: Array<[string, string, string]> = [
    ['/award-cycles', 'status=pending', 'status'],
    ['/award-cycles', 'status=Open', 'status'],
    ['/award-cycles', 'q=', 'q'],
    ['/award-cycles', 'q=%20%20', 'q'],
    ['/award-cycles', `q=${'x'.repeat(201)}`, 'q'],
    ['/award-cycles', 'fund_id=1', 'fund_id'],
    ['/students', 'status=active', 'status'],
    ['/students', 'q=a&q=b', 'q'],
    ['/scholarships', 'fund_id=abc', 'fund_id'],
    ['/scholarships', 'fund_id=0', 'fund_id'],
    ['/scholarships', 'fund_id=-3', 'fund_id'],
    ['/scholarships', 'status=closed', 'status'],
    ['/awards', 'award_cycle_id=1.5', 'award_cycle_id'],
    ['/awards', 'scholarship_id=', 'scholarship_id'],
    ['/awards', 'student_id=99999999999999999', 'student_id'],
    ['/awards', 'status=accepted,disbursed', 'status'],
    ['/awards', 'donor_id=1', 'donor_id'],
    ['/awards', 'limit=ten', 'limit'],
  ];
  test.each(cases)('GET %s?%s is 400 invalid_parameter', async (path, params, param) => {
    const response = await get<ErrorBody>(`${path}?${params}`);
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({
      type: 'invalid_request_error',
      code: 'invalid_parameter',
      param,
    });
  });
});

describe('pinned filters across pages', () => {
  const pinned: Array<[string, () => Record<string, string | number>, () => number[]]> = [
    ['/award-cycles', () => ({ q: 'fall' }), () => [id.past, id.fall]],
    ['/students', () => ({ q: 's-100' }), () => [id.alan, id.ada]],
    ['/scholarships', () => ({ fund_id: id.stem }), () => [id.stemRetired, id.stemExcellence]],
    ['/awards', () => ({ student_id: id.ada }), () => [id.adaPast, id.adaFall]],
  ];
  test.each(pinned)(
    'GET %s walked one row a page keeps the first request’s filter',
    async (path, params, expected) => {
      const pages = await walk(path, params(), 1);
      expect(pages.flatMap(idsOf)).toEqual(expected());
      expect(pages).toHaveLength(expected().length);
      expect(pages[0]!.has_more).toBe(true);
      expect(pages.at(-1)).toMatchObject({ has_more: false, next_cursor: null });
    },
  );

  test('walking back from the last page returns the same rows, each page newest first', async () => {
    const forward = await walk('/awards', {}, 2);
    const all = forward.flatMap(idsOf);
    let response = await get(
      `/awards?${query({ limit: 2, ending_before: forward.at(-1)!.previous_cursor! })}`,
    );
    const backward: number[][] = [idsOf(forward.at(-1)!)];
    for (;;) {
      expect(response.status).toBe(200);
      backward.unshift(idsOf(response.body));
      if (!response.body.previous_cursor) break;
      response = await get(
        `/awards?${query({ limit: 2, ending_before: response.body.previous_cursor })}`,
      );
    }
    expect(backward.flat()).toEqual(all);
    expect(all).toEqual(await storedIds('awards', service.tenant.institutionId));
  });

  test('the same filter repeated with the cursor is accepted; a different one is invalid_cursor', async () => {
    const first = await get(`/awards?${query({ award_cycle_id: id.past, limit: 1 })}`);
    expect(idsOf(first.body)).toEqual([id.adaPast]);
    const cursor = first.body.next_cursor!;

    const same = await get(
      `/awards?${query({ award_cycle_id: id.past, limit: 1, starting_after: cursor })}`,
    );
    expect(same.status).toBe(200);
    expect(idsOf(same.body)).toEqual([id.gracePast]);

    const withoutFilter = await get(`/awards?${query({ limit: 1, starting_after: cursor })}`);
    expect(withoutFilter.body).toEqual(same.body);

    for (const params of [
      { award_cycle_id: id.fall } as Record<string, number | string>,
      { status: 'accepted' },
      { student_id: id.ada },
    ]) {
      const response = await get<ErrorBody>(
        `/awards?${query({ ...params, starting_after: cursor })}`,
      );
      expect(response.status).toBe(400);
      expect(response.body.error).toMatchObject({
        code: 'invalid_cursor',
        param: 'starting_after',
      });
    }
  });

  test('a cursor works only on the list that issued it and for its own institution', async () => {
    const first = await get(`/students?${query({ limit: 1 })}`);
    const cursor = first.body.next_cursor!;
    for (const [path, key] of [
      ['/award-cycles', undefined],
      ['/scholarships', undefined],
      ['/awards', undefined],
      ['/students', other.key],
    ] as const) {
      const response = await get<ErrorBody>(`${path}?${query({ starting_after: cursor })}`, key);
      expect(response.status).toBe(400);
      expect(response.body.error.code).toBe('invalid_cursor');
    }
    const tampered = await get<ErrorBody>(
      `/students?${query({ starting_after: `${cursor.slice(0, -1)}${cursor.endsWith('A') ? 'B' : 'A'}` })}`,
    );
    expect(tampered.status).toBe(400);
    expect(tampered.body.error.code).toBe('invalid_cursor');
  });
});
