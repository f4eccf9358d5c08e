// The filters of GET /award-cycles, /students, /scholarships and /awards, and invalid values.
import {
  foreign,
  get,
  id,
  idsOf,
  other,
  patch,
  query,
  setUpListTests,
  type ErrorBody,
} from './helpers/scholarshipLists.js';

setUpListTests();

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
