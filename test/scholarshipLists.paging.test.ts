// Each list unfiltered (own rows, newest first), and filters pinned across pages by the cursor.
import { pagePositions } from './helpers/cursors.js';
import {
  get,
  id,
  idsOf,
  other,
  query,
  service,
  setUpListTests,
  storedIds,
  walk,
  type ErrorBody,
  type Row,
} from './helpers/scholarshipLists.js';

setUpListTests();

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
    expect(pagePositions(withoutFilter.body)).toEqual(pagePositions(same.body));

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
