import { sql } from 'slonik';
import {
  startTestService,
  type ApiResponse,
  type Tenant,
  type TestService,
} from './helpers/harness.js';

/**
 * Scholarship reporting (product.md §4, interface.md §4): GET /scholarships/awarded-students and
 * GET /scholarships/fund-summaries over one realistic award cycle, built through the API.
 */

interface AwardedStudent {
  object: string;
  award_id: number;
  award_cycle_id: number;
  amount: number;
  status: string;
  student: {
    id: number;
    student_number: string;
    first_name: string;
    last_name: string;
    email: string | null;
  };
  scholarship: { id: number; name: string };
  fund: { id: number; code: string; name: string };
}
interface FundSummary {
  object: string;
  fund: { id: number; code: string; name: string };
  award_cycle_id: number;
  awards_count: number;
  students_count: number;
  amount_awarded: number;
}
interface Page<T> {
  object: string;
  url: string;
  has_more: boolean;
  next_cursor: string | null;
  previous_cursor: string | null;
  data: T[];
}
interface ErrorBody {
  error: { type: string; code: string; param?: string; message: string };
}

const AWARDED = '/scholarships/awarded-students';
const SUMMARIES = '/scholarships/fund-summaries';

let service: TestService;
let other: Tenant;

const fund = { stem: 0, arts: 0, general: 0, music: 0, unused: 0 };
const scholarship = { stemExcellence: 0, stemAccess: 0, artsPrize: 0, generalAid: 0, music: 0 };
const student = { ada: 0, alan: 0, grace: 0, katherine: 0, edsger: 0, barbara: 0, donald: 0 };
const cycle = { fall: 0, spring: 0 };
const donor = { patron: 0, artsLover: 0, lapsed: 0 };
/** Awards of the fall cycle by final status; `awarded` are the accepted and disbursed ones. */
const awards = { awarded: [] as number[], notAwarded: [] as number[], springAwarded: 0 };
const foreign = { cycle: 0, fund: 0, scholarship: 0, student: 0, donor: 0, award: 0 };

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

const statusPaths: Record<string, string[]> = {
  offered: [],
  accepted: ['accepted'],
  declined: ['declined'],
  cancelled: ['cancelled'],
  disbursed: ['accepted', 'disbursed'],
  'accepted then cancelled': ['accepted', 'cancelled'],
};

/** An award brought to `status` through the transitions the state machine allows. */
async function award(
  cycleId: number,
  scholarshipId: number,
  studentId: number,
  amount: number,
  status: keyof typeof statusPaths,
  key?: string,
): Promise<number> {
  const awardId = await create(
    '/awards',
    { award_cycle_id: cycleId, scholarship_id: scholarshipId, student_id: studentId, amount },
    key,
  );
  for (const next of statusPaths[status]!) await patch(`/awards/${awardId}`, { status: next }, key);
  return awardId;
}

const get = <T>(path: string, key?: string): Promise<ApiResponse<T>> =>
  service.call<T>('GET', `/api/v1${path}`, key ? { key } : {});

const query = (params: Record<string, string | number>) =>
  new URLSearchParams(
    Object.entries(params).map(([name, value]): [string, string] => [name, String(value)]),
  ).toString();

const awarded = (params: Record<string, string | number>, key?: string) =>
  get<Page<AwardedStudent>>(`${AWARDED}?${query(params)}`, key);
const summaries = (params: Record<string, string | number>, key?: string) =>
  get<Page<FundSummary>>(`${SUMMARIES}?${query(params)}`, key);

const awardIds = (page: Page<AwardedStudent>) => page.data.map((row) => row.award_id);
const descending = (ids: number[]) => [...ids].sort((a, b) => b - a);

/** Every page of a report, forward from the first request, at `limit`. */
async function walkForward<T>(
  path: string,
  params: Record<string, string | number>,
  limit: number,
) {
  const pages: Array<Page<T>> = [];
  let response = await get<Page<T>>(`${path}?${query({ ...params, limit })}`);
  for (;;) {
    expect(response.status).toBe(200);
    pages.push(response.body);
    if (!response.body.next_cursor) break;
    expect(response.body.has_more).toBe(true);
    response = await get<Page<T>>(
      `${path}?${query({ limit, starting_after: response.body.next_cursor })}`,
    );
  }
  return pages;
}

/** Every page of a report, backward from the last page of a forward walk, in reading order. */
async function walkBackward<T>(path: string, last: Page<T>, limit: number) {
  const pages: Array<Page<T>> = [last];
  let cursor = last.previous_cursor;
  while (cursor) {
    const response = await get<Page<T>>(`${path}?${query({ limit, ending_before: cursor })}`);
    expect(response.status).toBe(200);
    pages.unshift(response.body);
    cursor = response.body.previous_cursor;
  }
  return pages;
}

beforeAll(async () => {
  service = await startTestService();
  other = await service.createTenant('Other College');

  fund.stem = await create('/funds', { name: 'STEM Endowment', code: 'STEM-END', endowed: true });
  fund.arts = await create('/funds', { name: 'Arts Fund', code: 'ARTS' });
  fund.general = await create('/funds', { name: 'General Scholarships', code: 'GEN' });
  fund.music = await create('/funds', { name: 'Music Fund', code: 'MUSIC' });
  fund.unused = await create('/funds', { name: 'Unused Fund', code: 'UNUSED' });

  scholarship.stemExcellence = await create('/scholarships', {
    name: 'STEM Excellence',
    fund_id: fund.stem,
  });
  scholarship.stemAccess = await create('/scholarships', {
    name: 'STEM Access',
    fund_id: fund.stem,
  });
  scholarship.artsPrize = await create('/scholarships', { name: 'Arts Prize', fund_id: fund.arts });
  scholarship.generalAid = await create('/scholarships', {
    name: 'General Aid',
    fund_id: fund.general,
  });
  scholarship.music = await create('/scholarships', { name: 'Music Prize', fund_id: fund.music });

  const people: Array<[keyof typeof student, string, string, string | null]> = [
    ['ada', 'Ada', 'Lovelace', 'ada@example.edu'],
    ['alan', 'Alan', 'Turing', null],
    ['grace', 'Grace', 'Hopper', 'grace@example.edu'],
    ['katherine', 'Katherine', 'Johnson', null],
    ['edsger', 'Edsger', 'Dijkstra', null],
    ['barbara', 'Barbara', 'Liskov', 'barbara@example.edu'],
    ['donald', 'Donald', 'Knuth', null],
  ];
  let number = 1000;
  for (const [name, first_name, last_name, email] of people) {
    student[name] = await create('/students', {
      student_number: `S-${++number}`,
      first_name,
      last_name,
      ...(email ? { email } : {}),
    });
  }

  cycle.fall = await create('/award-cycles', {
    name: 'Fall 2026',
    starts_on: '2026-09-01',
    ends_on: '2026-12-31',
    status: 'open',
  });
  cycle.spring = await create('/award-cycles', {
    name: 'Spring 2027',
    starts_on: '2027-01-01',
    ends_on: '2027-05-31',
    status: 'open',
  });

  // The fall cycle: awards in every status. Ada holds two STEM awards (two scholarships of one
  // fund), so the STEM fund has more awards than students.
  const fall: Array<[number, number, number, keyof typeof statusPaths]> = [
    [scholarship.stemExcellence, student.ada, 2500, 'accepted'],
    [scholarship.stemExcellence, student.alan, 1500.5, 'disbursed'],
    [scholarship.stemAccess, student.ada, 1000, 'accepted'],
    [scholarship.stemAccess, student.grace, 700, 'offered'],
    [scholarship.artsPrize, student.katherine, 3000, 'declined'],
    [scholarship.artsPrize, student.katherine, 1200.25, 'accepted'],
    [scholarship.artsPrize, student.edsger, 800, 'cancelled'],
    [scholarship.generalAid, student.edsger, 900, 'disbursed'],
    [scholarship.generalAid, student.barbara, 450.1, 'accepted'],
    [scholarship.stemExcellence, student.donald, 600, 'accepted then cancelled'],
    [scholarship.generalAid, student.donald, 0.05, 'disbursed'],
    // The music fund has only an offer in the cycle: nothing awarded yet.
    [scholarship.music, student.barbara, 5000, 'offered'],
  ];
  for (const [scholarshipId, studentId, amount, status] of fall) {
    const awardId = await award(cycle.fall, scholarshipId, studentId, amount, status);
    (status === 'accepted' || status === 'disbursed' ? awards.awarded : awards.notAwarded).push(
      awardId,
    );
  }
  // Another cycle, same fund and student: never part of the fall report.
  awards.springAwarded = await award(
    cycle.spring,
    scholarship.stemExcellence,
    student.ada,
    4000,
    'accepted',
  );

  // Donors and their gifts: the patron gave twice to STEM and once to General; the arts lover
  // gave to Arts and once without a designation; the lapsed donor gave only to the unused fund.
  donor.patron = await create('/donors', {
    role: 'Foundation',
    organization_name: 'Patron Trust',
    email: 'trust@example.org',
  });
  donor.artsLover = await create('/donors', {
    role: 'Individual',
    first_name: 'Ars',
    last_name: 'Longa',
    email: 'ars@example.org',
  });
  donor.lapsed = await create('/donors', {
    role: 'Household',
    last_name: 'Lapsed',
    email: 'lapsed@example.org',
  });
  const gifts: Array<[number, number | null, number]> = [
    [donor.patron, fund.stem, 10000],
    [donor.patron, fund.stem, 5000],
    [donor.patron, fund.general, 2000],
    [donor.artsLover, fund.arts, 750],
    [donor.artsLover, null, 50],
    [donor.lapsed, fund.unused, 100],
  ];
  for (const [donorId, fundId, amount] of gifts) {
    await create('/gifts', {
      donor_id: donorId,
      amount,
      subject: 'Annual gift',
      gift_date: '2026-06-01',
      ...(fundId ? { fund_id: fundId } : {}),
    });
  }

  // Another institution with a look-alike cycle, an awarded student and a donor of the fund.
  const key = other.key;
  foreign.fund = await create('/funds', { name: 'STEM Endowment', code: 'STEM-END' }, key);
  foreign.scholarship = await create(
    '/scholarships',
    { name: 'STEM Excellence', fund_id: foreign.fund },
    key,
  );
  foreign.student = await create(
    '/students',
    { student_number: 'S-1001', first_name: 'Ada', last_name: 'Lovelace' },
    key,
  );
  foreign.cycle = await create(
    '/award-cycles',
    { name: 'Fall 2026', starts_on: '2026-09-01', ends_on: '2026-12-31', status: 'open' },
    key,
  );
  foreign.award = await award(
    foreign.cycle,
    foreign.scholarship,
    foreign.student,
    2500,
    'accepted',
    key,
  );
  foreign.donor = await create(
    '/donors',
    { role: 'Foundation', organization_name: 'Other Trust', email: 'trust@example.org' },
    key,
  );
  await create(
    '/gifts',
    {
      donor_id: foreign.donor,
      amount: 100,
      subject: 'Gift',
      gift_date: '2026-06-01',
      fund_id: foreign.fund,
    },
    key,
  );
}, 30_000);

afterAll(async () => {
  await service?.close();
});

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
    expect(repeated.body).toEqual(alone.body);

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

describe('GET /scholarships/fund-summaries', () => {
  /** The fund summaries the awarded-students rows of the cycle add up to, newest fund first. */
  async function expectedSummaries(cycleId: number): Promise<FundSummary[]> {
    const pages = await walkForward<AwardedStudent>(AWARDED, { award_cycle_id: cycleId }, 100);
    const byFund = new Map<number, { rows: AwardedStudent[] }>();
    for (const row of pages.flatMap((page) => page.data)) {
      const entry = byFund.get(row.fund.id) ?? { rows: [] };
      entry.rows.push(row);
      byFund.set(row.fund.id, entry);
    }
    return [...byFund.entries()]
      .sort(([a], [b]) => b - a)
      .map(([, { rows }]) => ({
        object: 'fund_summary',
        fund: rows[0]!.fund,
        award_cycle_id: cycleId,
        awards_count: rows.length,
        students_count: new Set(rows.map((row) => row.student.id)).size,
        // In cents, so that the expected total is exact.
        amount_awarded: rows.reduce((cents, row) => cents + Math.round(row.amount * 100), 0) / 100,
      }));
  }

  test('one row per fund with awarded awards in the cycle, adding up to the awarded students', async () => {
    const response = await summaries({ award_cycle_id: cycle.fall });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      object: 'list',
      url: '/api/v1/scholarships/fund-summaries',
      has_more: false,
      next_cursor: null,
      previous_cursor: null,
    });
    expect(response.body.data).toEqual(await expectedSummaries(cycle.fall));
  });

  test('the totals, written out', async () => {
    const response = await summaries({ award_cycle_id: cycle.fall });
    expect(response.body.data).toEqual([
      {
        object: 'fund_summary',
        fund: { id: fund.general, code: 'GEN', name: 'General Scholarships' },
        award_cycle_id: cycle.fall,
        awards_count: 3,
        students_count: 3,
        amount_awarded: 1350.15,
      },
      {
        object: 'fund_summary',
        fund: { id: fund.arts, code: 'ARTS', name: 'Arts Fund' },
        award_cycle_id: cycle.fall,
        awards_count: 1,
        students_count: 1,
        amount_awarded: 1200.25,
      },
      {
        object: 'fund_summary',
        fund: { id: fund.stem, code: 'STEM-END', name: 'STEM Endowment' },
        award_cycle_id: cycle.fall,
        awards_count: 3,
        students_count: 2,
        amount_awarded: 5000.5,
      },
    ]);
    // Funds with no awards in the cycle, or only offers, have no row.
    const funds = response.body.data.map((row) => row.fund.id);
    expect(funds).not.toContain(fund.music);
    expect(funds).not.toContain(fund.unused);
  });

  test('amount_awarded is exact where floating-point addition is not', async () => {
    // 900 + 450.1 + 0.05 in binary floating point is 1350.1499999999999.
    expect(900 + 450.1 + 0.05).not.toBe(1350.15);
    const response = await summaries({ award_cycle_id: cycle.fall });
    expect(response.body.data.find((row) => row.fund.id === fund.general)?.amount_awarded).toBe(
      1350.15,
    );
  });

  test('another cycle is summarised on its own', async () => {
    const response = await summaries({ award_cycle_id: cycle.spring });
    expect(response.body.data).toEqual(await expectedSummaries(cycle.spring));
    expect(response.body.data).toEqual([
      expect.objectContaining({
        fund: expect.objectContaining({ id: fund.stem }),
        awards_count: 1,
        amount_awarded: 4000,
      }),
    ]);
  });

  test('walking pages of 1 forward and back gives each fund once', async () => {
    const forward = await walkForward<FundSummary>(SUMMARIES, { award_cycle_id: cycle.fall }, 1);
    const funds = forward.map((page) => page.data.map((row) => row.fund.id));
    expect(funds).toEqual([[fund.general], [fund.arts], [fund.stem]]);
    const backward = await walkBackward<FundSummary>(SUMMARIES, forward.at(-1)!, 1);
    expect(backward.map((page) => page.data)).toEqual(forward.map((page) => page.data));
  });

  test('award_cycle_id is required and pinned', async () => {
    const missing = await get<ErrorBody>(`${SUMMARIES}?limit=1`);
    expect(missing.status).toBe(400);
    expect(missing.body.error).toMatchObject({
      code: 'parameter_missing',
      param: 'award_cycle_id',
    });

    const first = await summaries({ award_cycle_id: cycle.fall, limit: 1 });
    const cursor = first.body.next_cursor!;
    const repeated = await summaries({
      award_cycle_id: cycle.fall,
      starting_after: cursor,
      limit: 1,
    });
    expect(repeated.status).toBe(200);
    expect(repeated.body.data.map((row) => row.fund.id)).toEqual([fund.arts]);

    const different = await get<ErrorBody>(
      `${SUMMARIES}?${query({ award_cycle_id: cycle.spring, starting_after: cursor })}`,
    );
    expect(different.status).toBe(400);
    expect(different.body.error.code).toBe('invalid_cursor');

    // A cursor of one report is not a cursor of the other.
    const crossed = await get<ErrorBody>(`${AWARDED}?${query({ starting_after: cursor })}`);
    expect(crossed.status).toBe(400);
    expect(crossed.body.error.code).toBe('invalid_cursor');
  });

  test.each([
    ['award_cycle_id=x', 'award_cycle_id'],
    ['award_cycle_id=1&fund_id=1', 'fund_id'],
    ['award_cycle_id=1&q=stem', 'q'],
  ])('%s is 400 invalid_parameter', async (params, param) => {
    const response = await get<ErrorBody>(`${SUMMARIES}?${params}`);
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ code: 'invalid_parameter', param });
  });

  test('another institution’s cycle gives an empty page; its own key sees its own fund', async () => {
    const ours = await summaries({ award_cycle_id: foreign.cycle });
    expect(ours.status).toBe(200);
    expect(ours.body).toMatchObject({ has_more: false, next_cursor: null, data: [] });

    const theirs = await summaries({ award_cycle_id: foreign.cycle }, other.key);
    expect(theirs.body.data).toEqual([
      {
        object: 'fund_summary',
        fund: { id: foreign.fund, code: 'STEM-END', name: 'STEM Endowment' },
        award_cycle_id: foreign.cycle,
        awards_count: 1,
        students_count: 1,
        amount_awarded: 2500,
      },
    ]);
    const theirsOnOurs = await summaries({ award_cycle_id: cycle.fall }, other.key);
    expect(theirsOnOurs.body.data).toEqual([]);
  });

  test('a summary follows the awards as their status changes', async () => {
    const offered = awards.notAwarded[0]!; // Grace's STEM Access offer, 700
    await patch(`/awards/${offered}`, { status: 'accepted' });
    try {
      const response = await summaries({ award_cycle_id: cycle.fall });
      expect(response.body.data.find((row) => row.fund.id === fund.stem)).toMatchObject({
        awards_count: 4,
        students_count: 3,
        amount_awarded: 5700.5,
      });
      expect(response.body.data).toEqual(await expectedSummaries(cycle.fall));
    } finally {
      // Leave the cycle as the other tests expect it (accepted -> cancelled is allowed).
      await patch(`/awards/${offered}`, { status: 'cancelled' });
    }
  });
});

describe('routing', () => {
  test.each([AWARDED, SUMMARIES])('GET %s is the report, not a scholarship id', async (path) => {
    const response = await get<ErrorBody>(path);
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('parameter_missing');
  });

  test('GET /scholarships/{id} still retrieves a scholarship', async () => {
    const response = await get<{ id: number; object: string }>(
      `/scholarships/${scholarship.artsPrize}`,
    );
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ id: scholarship.artsPrize, object: 'scholarship' });
  });

  test('a write to a report path is 405 with Allow: GET, not an update of a scholarship', async () => {
    const response = await service.call<{ error: { code: string } }>(
      'PATCH',
      '/api/v1/scholarships/awarded-students',
      { body: { name: 'x' } },
    );
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET');
    expect(response.body.error.code).toBe('method_not_allowed');
  });

  test('requests to a report are counted under the report’s route in /metrics', async () => {
    await awarded({ award_cycle_id: cycle.fall });
    const metrics = await fetch(`${service.url}/metrics`);
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toMatch(
      /http_requests_total\{method="GET",route="\/api\/v1\/scholarships\/awarded-students",status="200"\} \d+/,
    );
  });
});
