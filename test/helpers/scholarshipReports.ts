/**
 * What the scholarshipReports.*.test.ts files share: one realistic award cycle, built through the
 * API (scholarship reporting, product.md §4, interface.md §4), and the report helpers.
 */
import { startTestService, type ApiResponse, type Tenant, type TestService } from './harness.js';

export interface AwardedStudent {
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
export interface FundSummary {
  object: string;
  fund: { id: number; code: string; name: string };
  award_cycle_id: number;
  awards_count: number;
  students_count: number;
  amount_awarded: number;
}
export interface Page<T> {
  object: string;
  url: string;
  has_more: boolean;
  next_cursor: string | null;
  previous_cursor: string | null;
  data: T[];
}
export interface ErrorBody {
  error: { type: string; code: string; param?: string; message: string };
}

export const AWARDED = '/scholarships/awarded-students';
export const SUMMARIES = '/scholarships/fund-summaries';

export let service: TestService;
export let other: Tenant;

export const fund = { stem: 0, arts: 0, general: 0, music: 0, unused: 0 };
export const scholarship = {
  stemExcellence: 0,
  stemAccess: 0,
  artsPrize: 0,
  generalAid: 0,
  music: 0,
};
export const student = {
  ada: 0,
  alan: 0,
  grace: 0,
  katherine: 0,
  edsger: 0,
  barbara: 0,
  donald: 0,
};
export const cycle = { fall: 0, spring: 0 };
export const donor = { patron: 0, artsLover: 0, lapsed: 0 };
/** Awards of the fall cycle by final status; `awarded` are the accepted and disbursed ones. */
export const awards = { awarded: [] as number[], notAwarded: [] as number[], springAwarded: 0 };
export const foreign = { cycle: 0, fund: 0, scholarship: 0, student: 0, donor: 0, award: 0 };

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

export const get = <T>(path: string, key?: string): Promise<ApiResponse<T>> =>
  service.call<T>('GET', `/api/v1${path}`, key ? { key } : {});

export const query = (params: Record<string, string | number>) =>
  new URLSearchParams(
    Object.entries(params).map(([name, value]): [string, string] => [name, String(value)]),
  ).toString();

export const awarded = (params: Record<string, string | number>, key?: string) =>
  get<Page<AwardedStudent>>(`${AWARDED}?${query(params)}`, key);
export const summaries = (params: Record<string, string | number>, key?: string) =>
  get<Page<FundSummary>>(`${SUMMARIES}?${query(params)}`, key);

export const awardIds = (page: Page<AwardedStudent>) => page.data.map((row) => row.award_id);
export const descending = (ids: number[]) => [...ids].sort((a, b) => b - a);

/** Every page of a report, forward from the first request, at `limit`. */
export async function walkForward<T>(
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
export async function walkBackward<T>(path: string, last: Page<T>, limit: number) {
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

/** Starts the file's own service and builds the data above; call once at the top of a test file. */
export function setUpReportTests(): void {
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
    scholarship.artsPrize = await create('/scholarships', {
      name: 'Arts Prize',
      fund_id: fund.arts,
    });
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
}
