/** What the awards.*.test.ts files share: the award shape, the fixture ids and the award helpers. */
import { sql } from 'slonik';
import { expectSameErrorThreeWays as sameErrorThreeWays, type ExpectedError } from './threeWays.js';
import { startTestService, type ApiResponse, type Tenant, type TestService } from './harness.js';
import { created } from './responses.js';

export interface Award {
  id: number;
  object: string;
  award_cycle_id: number;
  scholarship_id: number;
  student_id: number;
  amount: number;
  status: string;
  created_at: string;
  updated_at: string;
}

export let service: TestService;
let other: Tenant;
/** Ids created in beforeAll that the case tables refer to. */
export const ids = {
  fund: 0,
  scholarship: 0,
  secondScholarship: 0,
  retiredScholarship: 0,
  openCycle: 0,
  secondOpenCycle: 0,
  closedCycle: 0,
  draftCycle: 0,
  archivedCycle: 0,
  student: 0,
  /** Holds a live award of `scholarship` in `openCycle`. */
  awardedStudent: 0,
  otherCycle: 0,
  otherScholarship: 0,
  otherStudent: 0,
  otherAward: 0,
};
let counter = 0;
/** A number no other call of this file has had, for unique names and keys. */
export const nextNumber = () => ++counter;

export async function ok<T>(response: Promise<ApiResponse<T>>): Promise<T> {
  const result = await response;
  if (result.status !== 200)
    throw new Error(`expected 200, got ${result.status}: ${JSON.stringify(result.body)}`);
  return result.body;
}

export const post = <T = { id: number }>(
  path: string,
  body: Record<string, unknown>,
  key?: string,
) => created<T>(service.call<T>('POST', path, { key, body }));

export const newStudent = async (key?: string) =>
  (
    await post(
      '/api/v1/students',
      { student_number: `S-${++counter}`, first_name: 'Ada', last_name: 'Lovelace' },
      key,
    )
  ).id;

export const newCycle = async (status: 'draft' | 'open', key?: string) =>
  (
    await post(
      '/api/v1/award-cycles',
      { name: `Cycle ${++counter}`, starts_on: '2026-09-01', ends_on: '2027-06-30', status },
      key,
    )
  ).id;

export const patchCycle = (id: number, status: string) =>
  ok(service.call('PATCH', `/api/v1/award-cycles/${id}`, { body: { status } }));

/** A valid award body for a student with no award yet; an `undefined` override drops the field. */
export const awardBody = (overrides: Record<string, unknown> = {}): Record<string, unknown> => ({
  award_cycle_id: ids.openCycle,
  scholarship_id: ids.scholarship,
  student_id: ids.student,
  amount: 2500,
  ...overrides,
});

/** An award for a fresh student; overrides win. */
export const createAward = async (overrides: Record<string, unknown> = {}) =>
  post<Award>('/api/v1/awards', awardBody({ student_id: await newStudent(), ...overrides }));

export const patchAward = (id: number, body: Record<string, unknown>) =>
  service.call<Award>('PATCH', `/api/v1/awards/${id}`, { body });

/** An award brought to `status` through transitions the machine allows. */
export async function awardIn(status: string): Promise<Award> {
  const paths: Record<string, string[]> = {
    offered: [],
    accepted: ['accepted'],
    declined: ['declined'],
    cancelled: ['cancelled'],
    disbursed: ['accepted', 'disbursed'],
  };
  let award = await createAward();
  for (const next of paths[status] ?? []) award = await ok(patchAward(award.id, { status: next }));
  return award;
}

export interface StoredAward {
  award_cycle_id: number;
  scholarship_id: number;
  student_id: number;
  amount: string;
  status: string;
  updated_at: string;
}

export async function awardRow(id: number): Promise<StoredAward | null> {
  const row = await service.db.maybeOne(sql.unsafe`
    SELECT award_cycle_id, scholarship_id, student_id, amount::text AS amount, status, updated_at
    FROM awards WHERE id = ${id}`);
  return row as StoredAward | null;
}

/** Every award row, to show that a refused call wrote nothing anywhere. */
const allAwards = () =>
  service.db.any(sql.unsafe`SELECT id, amount::text, status, updated_at FROM awards ORDER BY id`);

/** Three ways, by default checking that no award row changed. */
export const expectSameErrorThreeWays = (
  path: string,
  method: 'POST' | 'PATCH',
  body: Record<string, unknown>,
  expected: ExpectedError,
  snapshot: () => Promise<unknown> = allAwards,
) => sameErrorThreeWays(service, path, method, body, expected, snapshot);

/** Starts the file's own service and creates the ids above; call once at the top of a test file. */
export function setUpAwardTests(): void {
  beforeAll(async () => {
    service = await startTestService();
    other = await service.createTenant('Other College', 'USD');
    ids.fund = (await post('/api/v1/funds', { name: 'STEM Endowment', code: 'STEM' })).id;
    const scholarship = (name: string, status = 'active') =>
      post('/api/v1/scholarships', { name, fund_id: ids.fund, status });
    ids.scholarship = (await scholarship('STEM Excellence')).id;
    ids.secondScholarship = (await scholarship('Arts Prize')).id;
    ids.retiredScholarship = (await scholarship('Old Prize', 'retired')).id;
    ids.openCycle = await newCycle('open');
    ids.secondOpenCycle = await newCycle('open');
    ids.closedCycle = await newCycle('open');
    await patchCycle(ids.closedCycle, 'closed');
    ids.draftCycle = await newCycle('draft');
    ids.archivedCycle = await newCycle('draft');
    await patchCycle(ids.archivedCycle, 'archived');
    ids.student = await newStudent();
    ids.awardedStudent = await newStudent();
    await post('/api/v1/awards', awardBody({ student_id: ids.awardedStudent }));

    const theirFund = (await post('/api/v1/funds', { name: 'Theirs', code: 'STEM' }, other.key)).id;
    ids.otherScholarship = (
      await post('/api/v1/scholarships', { name: 'Theirs', fund_id: theirFund }, other.key)
    ).id;
    ids.otherCycle = await newCycle('open', other.key);
    ids.otherStudent = await newStudent(other.key);
    ids.otherAward = (
      await post(
        '/api/v1/awards',
        {
          award_cycle_id: ids.otherCycle,
          scholarship_id: ids.otherScholarship,
          student_id: ids.otherStudent,
          amount: 10,
        },
        other.key,
      )
    ).id;
  });

  afterAll(async () => {
    await service?.close();
  });
}

export type Case = [
  name: string,
  body: () => Record<string, unknown>,
  expected: Array<{ param: string; code: string }>,
];
