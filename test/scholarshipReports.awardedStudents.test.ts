// Scholarship reporting (product.md §4, interface.md §4): GET /scholarships/awarded-students.
import { sql } from 'slonik';
import { pagePositions } from './helpers/cursors.js';
import {
  AWARDED,
  awardIds,
  awarded,
  awards,
  cycle,
  descending,
  donor,
  foreign,
  fund,
  get,
  other,
  query,
  scholarship,
  service,
  setUpReportTests,
  student,
  walkBackward,
  walkForward,
  type AwardedStudent,
  type ErrorBody,
} from './helpers/scholarshipReports.js';

setUpReportTests();

describe('GET /scholarships/awarded-students', () => {
  test('lists exactly the accepted and disbursed awards of the cycle, newest first', async () => {
    const response = await awarded({ award_cycle_id: cycle.fall });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      object: 'list',
      url: '/api/v1/scholarships/awarded-students',
      has_more: false,
      next_cursor: null,
      previous_cursor: null,
    });
    expect(awardIds(response.body)).toEqual(descending(awards.awarded));

    const stored = await service.db.anyFirst(sql.unsafe`
      SELECT id FROM awards
      WHERE institution_id = ${service.tenant.institutionId} AND award_cycle_id = ${cycle.fall}
        AND status IN ('accepted', 'disbursed')
      ORDER BY id DESC`);
    expect(awardIds(response.body)).toEqual(stored.map(Number));
  });

  test('a row names the award, its student, scholarship and fund', async () => {
    const response = await awarded({ award_cycle_id: cycle.fall });
    const [adaStem] = awards.awarded;
    expect(response.body.data.find((row) => row.award_id === adaStem)).toEqual({
      object: 'awarded_student',
      award_id: adaStem,
      award_cycle_id: cycle.fall,
      amount: 2500,
      status: 'accepted',
      student: {
        id: student.ada,
        student_number: 'S-1001',
        first_name: 'Ada',
        last_name: 'Lovelace',
        email: 'ada@example.edu',
      },
      scholarship: { id: scholarship.stemExcellence, name: 'STEM Excellence' },
      fund: { id: fund.stem, code: 'STEM-END', name: 'STEM Endowment' },
    });
    const alan = response.body.data.find((row) => row.student.id === student.alan);
    expect(alan).toMatchObject({ amount: 1500.5, status: 'disbursed' });
    expect(alan?.student.email).toBeNull();
    const smallest = response.body.data.find((row) => row.student.id === student.donald);
    expect(smallest?.amount).toBe(0.05);
  });

  test('walking pages of 2 forward and back gives every awarded award exactly once', async () => {
    const forward = await walkForward<AwardedStudent>(AWARDED, { award_cycle_id: cycle.fall }, 2);
    const ids = forward.flatMap(awardIds);
    expect(ids).toEqual(descending(awards.awarded));
    expect(forward).toHaveLength(Math.ceil(awards.awarded.length / 2));
    expect(forward[0]!.previous_cursor).toBeNull();
    expect(forward.at(-1)).toMatchObject({ has_more: false, next_cursor: null });

    const backward = await walkBackward<AwardedStudent>(AWARDED, forward.at(-1)!, 2);
    expect(backward.map(awardIds)).toEqual(forward.map(awardIds));
  });

  const filterCases: Array<[string, () => Record<string, number | string>, () => number[]]> = [
    [
      'fund_id (both STEM scholarships)',
      () => ({ fund_id: fund.stem }),
      () => awards.awarded.slice(0, 3),
    ],
    ['fund_id of a fund with only an offer', () => ({ fund_id: fund.music }), () => []],
    [
      'scholarship_id',
      () => ({ scholarship_id: scholarship.artsPrize }),
      () => [awards.awarded[3]!],
    ],
    [
      'donor_id: the funds the donor gave to, each award once despite two gifts to one fund',
      () => ({ donor_id: donor.patron }),
      () => [...awards.awarded.slice(0, 3), ...awards.awarded.slice(4)],
    ],
    [
      'donor_id of a donor to Arts (and undesignated)',
      () => ({ donor_id: donor.artsLover }),
      () => [awards.awarded[3]!],
    ],
    ['donor_id of a donor to a fund with no awards', () => ({ donor_id: donor.lapsed }), () => []],
    [
      'q on a last name, any case',
      () => ({ q: 'lovelace' }),
      () => awards.awarded.slice(0, 3).filter((_, i) => i !== 1),
    ],
    ['q on a full name', () => ({ q: 'Katherine Johnson' }), () => [awards.awarded[3]!]],
    ['q on a student number', () => ({ q: 'S-1005' }), () => [awards.awarded[4]!]],
    ['q that is only in an email', () => ({ q: 'example.edu' }), () => []],
    [
      'donor_id with fund_id',
      () => ({ donor_id: donor.patron, fund_id: fund.general }),
      () => awards.awarded.slice(4),
    ],
  ];
  test.each(filterCases)('filter: %s', async (_name, params, expected) => {
    const response = await awarded({ award_cycle_id: cycle.fall, ...params() });
    expect(response.status).toBe(200);
    expect(awardIds(response.body)).toEqual(descending(expected()));
  });

  test('the stewardship filter follows each award to its scholarship’s fund', async () => {
    const response = await awarded({ award_cycle_id: cycle.fall, donor_id: donor.patron });
    const funds = new Set(response.body.data.map((row) => row.fund.id));
    expect([...funds].sort()).toEqual([fund.stem, fund.general].sort());
    expect(new Set(awardIds(response.body)).size).toBe(response.body.data.length);
  });

  test('without award_cycle_id on a first request: 400 parameter_missing', async () => {
    for (const params of [{}, { fund_id: fund.stem }, { limit: 5 }] as Array<
      Record<string, number>
    >) {
      const response = await get<ErrorBody>(`${AWARDED}?${query(params)}`);
      expect(response.status).toBe(400);
      expect(response.body.error).toMatchObject({
        type: 'invalid_request_error',
        code: 'parameter_missing',
        param: 'award_cycle_id',
      });
    }
  });

  test.each([
    ['award_cycle_id=abc', 'award_cycle_id'],
    ['award_cycle_id=0', 'award_cycle_id'],
    ['award_cycle_id=1&award_cycle_id=2', 'award_cycle_id'],
    ['award_cycle_id=1&fund_id=x', 'fund_id'],
    ['award_cycle_id=1&donor_id=-1', 'donor_id'],
    ['award_cycle_id=1&scholarship_id=1.0', 'scholarship_id'],
    ['award_cycle_id=1&q=', 'q'],
    ['award_cycle_id=1&status=accepted', 'status'],
    ['award_cycle_id=1&student_id=1', 'student_id'],
  ])('%s is 400 invalid_parameter', async (params, param) => {
    const response = await get<ErrorBody>(`${AWARDED}?${params}`);
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ code: 'invalid_parameter', param });
  });

  test('later pages send the cursor alone; award_cycle_id repeated equal is accepted, different is invalid_cursor', async () => {
    const first = await awarded({ award_cycle_id: cycle.fall, limit: 2 });
    const cursor = first.body.next_cursor!;

    const alone = await awarded({ limit: 2, starting_after: cursor });
    expect(alone.status).toBe(200);
    expect(awardIds(alone.body)).toEqual(descending(awards.awarded).slice(2, 4));

    const repeated = await awarded({
      award_cycle_id: cycle.fall,
      limit: 2,
      starting_after: cursor,
    });
    expect(repeated.status).toBe(200);
    expect(pagePositions(repeated.body)).toEqual(pagePositions(alone.body));

    const backCursor = alone.body.previous_cursor!;
    const back = await awarded({ award_cycle_id: cycle.fall, limit: 2, ending_before: backCursor });
    expect(awardIds(back.body)).toEqual(awardIds(first.body));

    for (const [params, param] of [
      [{ award_cycle_id: cycle.spring, starting_after: cursor }, 'starting_after'],
      [{ award_cycle_id: foreign.cycle, starting_after: cursor }, 'starting_after'],
      [{ award_cycle_id: cycle.spring, ending_before: backCursor }, 'ending_before'],
      [
        { award_cycle_id: cycle.fall, fund_id: fund.stem, starting_after: cursor },
        'starting_after',
      ],
    ] as Array<[Record<string, string | number>, string]>) {
      const response = await get<ErrorBody>(`${AWARDED}?${query(params)}`);
      expect(response.status).toBe(400);
      expect(response.body.error).toMatchObject({ code: 'invalid_cursor', param });
    }
  });

  test('filters stay pinned across pages', async () => {
    const pages = await walkForward<AwardedStudent>(
      AWARDED,
      { award_cycle_id: cycle.fall, donor_id: donor.patron },
      1,
    );
    expect(pages.flatMap(awardIds)).toEqual(
      descending([...awards.awarded.slice(0, 3), ...awards.awarded.slice(4)]),
    );
  });

  test('another cycle is its own report', async () => {
    const response = await awarded({ award_cycle_id: cycle.spring });
    expect(awardIds(response.body)).toEqual([awards.springAwarded]);
  });

  test('another institution’s cycle, fund, scholarship or donor gives an empty page', async () => {
    for (const params of [
      { award_cycle_id: foreign.cycle },
      { award_cycle_id: cycle.fall, fund_id: foreign.fund },
      { award_cycle_id: cycle.fall, scholarship_id: foreign.scholarship },
      { award_cycle_id: cycle.fall, donor_id: foreign.donor },
    ] as Array<Record<string, number>>) {
      const response = await awarded(params);
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({
        has_more: false,
        next_cursor: null,
        previous_cursor: null,
        data: [],
      });
    }
  });

  test('each institution sees only its own awarded students, and only its own cursors work', async () => {
    const theirs = await awarded({ award_cycle_id: foreign.cycle }, other.key);
    expect(theirs.status).toBe(200);
    expect(awardIds(theirs.body)).toEqual([foreign.award]);
    expect(theirs.body.data[0]).toMatchObject({
      student: { id: foreign.student },
      fund: { id: foreign.fund },
    });
    const ours = await awarded({ award_cycle_id: cycle.fall, limit: 1 });
    const stolen = await awarded({ starting_after: ours.body.next_cursor! }, other.key);
    expect(stolen.status).toBe(400);
    expect((stolen.body as unknown as ErrorBody).error.code).toBe('invalid_cursor');
  });
});
