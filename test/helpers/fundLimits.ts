/**
 * What the fundLimits.*.test.ts files share: an open award cycle, a donor, a second worker, and
 * helpers for funds with a limit, their scholarships, awards and totals.
 */
import { sql } from 'slonik';
import { startTestService, type ApiResponse, type TestService } from './harness.js';

export interface FieldErrorBody {
  param: string;
  code: string;
  message: string;
}

export interface ErrorEnvelope {
  error: {
    type: string;
    code: string;
    message: string;
    param?: string;
    errors?: FieldErrorBody[];
    request_id: string;
  };
}

export interface Award {
  id: number;
  scholarship_id: number;
  student_id: number;
  amount: number;
  status: string;
}

export interface Totals {
  gifts_received: number;
  awards_committed: number;
  award_capacity_remaining: number | null;
}

export interface Fund {
  id: number;
  award_limit: number | null;
  totals?: Totals;
}

export let service: TestService;
export const ids = { cycle: 0, donor: 0 };
let counter = 0;

async function expectStatus<T>(response: Promise<ApiResponse<T>>, status: number): Promise<T> {
  const result = await response;
  if (result.status !== status)
    throw new Error(`expected ${status}, got ${result.status}: ${JSON.stringify(result.body)}`);
  return result.body;
}

export const post = <T = { id: number }>(path: string, body: Record<string, unknown>) =>
  expectStatus(service.call<T>('POST', path, { body }), 201);

export const patch = <T = Record<string, unknown>>(path: string, body: Record<string, unknown>) =>
  expectStatus(service.call<T>('PATCH', path, { body }), 200);

/** A fund with the given limit (null: none) and one active scholarship drawing on it. */
export async function fundWithScholarship(
  awardLimit: number | null,
): Promise<{ fund: number; scholarship: number }> {
  const fund = (
    await post('/api/v1/funds', {
      name: `Fund ${++counter}`,
      code: `F-${counter}`,
      award_limit: awardLimit,
    })
  ).id;
  const scholarship = await newScholarship(fund);
  return { fund, scholarship };
}

export const newScholarship = async (fund: number) =>
  (await post('/api/v1/scholarships', { name: `Scholarship ${++counter}`, fund_id: fund })).id;

export const newStudents = (count: number) =>
  Promise.all(
    Array.from({ length: count }, async () => {
      const n = ++counter;
      return (
        await post('/api/v1/students', {
          student_number: `S-${n}`,
          first_name: 'Ada',
          last_name: `Student ${n}`,
        })
      ).id;
    }),
  );

export const awardBody = (scholarship: number, student: number, amount: number) => ({
  award_cycle_id: ids.cycle,
  scholarship_id: scholarship,
  student_id: student,
  amount,
});

export const createAward = async (scholarship: number, amount: number) => {
  const [student] = await newStudents(1);
  return post<Award>('/api/v1/awards', awardBody(scholarship, student ?? 0, amount));
};

export const totals = async (fund: number): Promise<Totals> => {
  const fetched = await expectStatus(service.call<Fund>('GET', `/api/v1/funds/${fund}`), 200);
  if (!fetched.totals) throw new Error('no totals');
  return fetched.totals;
};

/** What the database itself says the fund's live awards commit, as exact text. */
export const committedInDatabase = (fund: number) =>
  service.db.oneFirst(sql.unsafe`
    SELECT coalesce(sum(a.amount), 0)::text FROM awards a
    JOIN scholarships s ON s.id = a.scholarship_id
    WHERE s.fund_id = ${fund} AND a.status IN ('offered', 'accepted', 'disbursed')`);

export const fieldErrors = (response: ApiResponse) =>
  ((response.body as unknown as ErrorEnvelope).error.errors ?? []).map(({ param, code }) => ({
    param,
    code,
  }));

const withoutRequestId = (response: ApiResponse) => ({
  ...(response.body as unknown as ErrorEnvelope).error,
  request_id: undefined,
});

const snapshot = () =>
  service.db.any(sql.unsafe`
    SELECT 'award' AS kind, id, amount::text AS value, status, updated_at FROM awards
    UNION ALL SELECT 'fund', id, award_limit::text, status, updated_at FROM funds
    UNION ALL SELECT 'scholarship', id, fund_id::text, status, updated_at FROM scholarships
    ORDER BY kind, id`);

/**
 * A real call, a `?dry_run=true` call and a `Dry-Run: true` call of one refused write: all three
 * answer 422 validation_failed with exactly `expected`, and no award, fund or scholarship changes.
 */
export async function expectRefusedThreeWays(
  method: 'POST' | 'PATCH',
  path: string,
  body: Record<string, unknown>,
  expected: Array<{ param: string; code: string }>,
): Promise<void> {
  const before = await snapshot();
  const real = await service.call(method, path, { body });
  const dryQuery = await service.call(method, `${path}?dry_run=true`, { body });
  const dryHeader = await service.call(method, path, { body, headers: { 'Dry-Run': 'true' } });
  expect(real.status).toBe(422);
  expect((real.body as unknown as ErrorEnvelope).error.code).toBe('validation_failed');
  expect(fieldErrors(real)).toEqual(expected);
  for (const dry of [dryQuery, dryHeader]) {
    expect(dry.status).toBe(422);
    expect(withoutRequestId(dry)).toEqual(withoutRequestId(real));
  }
  expect(await snapshot()).toEqual(before);
}

export const insufficient = (param: string) => [{ param, code: 'insufficient_fund_balance' }];

/** Starts this file's service (with a second worker) and the ids above; call once per test file. */
export function setUpFundLimitTests(): void {
  beforeAll(async () => {
    service = await startTestService();
    // A second BullMQ worker with its own pool: concurrent writes really run in parallel.
    await service.startWorker();
    ids.cycle = (
      await post('/api/v1/award-cycles', {
        name: 'Limits cycle',
        starts_on: '2026-09-01',
        ends_on: '2027-06-30',
        status: 'open',
      })
    ).id;
    ids.donor = (
      await post('/api/v1/donors', {
        role: 'Individual',
        first_name: 'Grace',
        last_name: 'Hopper',
        email: 'grace@example.org',
      })
    ).id;
  });

  afterAll(async () => {
    await service?.close();
  });
}
