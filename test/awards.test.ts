import { sql } from 'slonik';
import {
  expectSameErrorThreeWays as sameErrorThreeWays,
  invalid,
  fieldErrors,
  type ErrorEnvelope,
  type ExpectedError,
} from './helpers/threeWays.js';
import {
  startTestService,
  type ApiResponse,
  type Tenant,
  type TestService,
} from './helpers/harness.js';
import { created, ISO_MS } from './helpers/responses.js';

interface Award {
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

let service: TestService;
let other: Tenant;
/** Ids created in beforeAll that the case tables refer to. */
const ids = {
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

async function ok<T>(response: Promise<ApiResponse<T>>): Promise<T> {
  const result = await response;
  if (result.status !== 200)
    throw new Error(`expected 200, got ${result.status}: ${JSON.stringify(result.body)}`);
  return result.body;
}

const post = <T = { id: number }>(path: string, body: Record<string, unknown>, key?: string) =>
  created<T>(service.call<T>('POST', path, { key, body }));

const newStudent = async (key?: string) =>
  (
    await post(
      '/api/v1/students',
      { student_number: `S-${++counter}`, first_name: 'Ada', last_name: 'Lovelace' },
      key,
    )
  ).id;

const newCycle = async (status: 'draft' | 'open', key?: string) =>
  (
    await post(
      '/api/v1/award-cycles',
      { name: `Cycle ${++counter}`, starts_on: '2026-09-01', ends_on: '2027-06-30', status },
      key,
    )
  ).id;

const patchCycle = (id: number, status: string) =>
  ok(service.call('PATCH', `/api/v1/award-cycles/${id}`, { body: { status } }));

/** A valid award body for a student with no award yet; an `undefined` override drops the field. */
const awardBody = (overrides: Record<string, unknown> = {}): Record<string, unknown> => ({
  award_cycle_id: ids.openCycle,
  scholarship_id: ids.scholarship,
  student_id: ids.student,
  amount: 2500,
  ...overrides,
});

/** An award for a fresh student; overrides win. */
const createAward = async (overrides: Record<string, unknown> = {}) =>
  post<Award>('/api/v1/awards', awardBody({ student_id: await newStudent(), ...overrides }));

const patchAward = (id: number, body: Record<string, unknown>) =>
  service.call<Award>('PATCH', `/api/v1/awards/${id}`, { body });

/** An award brought to `status` through transitions the machine allows. */
async function awardIn(status: string): Promise<Award> {
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

interface StoredAward {
  award_cycle_id: number;
  scholarship_id: number;
  student_id: number;
  amount: string;
  status: string;
  updated_at: string;
}

async function awardRow(id: number): Promise<StoredAward | null> {
  const row = await service.db.maybeOne(sql.unsafe`
    SELECT award_cycle_id, scholarship_id, student_id, amount::text AS amount, status, updated_at
    FROM awards WHERE id = ${id}`);
  return row as StoredAward | null;
}

/** Every award row, to show that a refused call wrote nothing anywhere. */
const allAwards = () =>
  service.db.any(sql.unsafe`SELECT id, amount::text, status, updated_at FROM awards ORDER BY id`);

/** Three ways, by default checking that no award row changed. */
const expectSameErrorThreeWays = (
  path: string,
  method: 'POST' | 'PATCH',
  body: Record<string, unknown>,
  expected: ExpectedError,
  snapshot: () => Promise<unknown> = allAwards,
) => sameErrorThreeWays(service, path, method, body, expected, snapshot);

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

type Case = [
  name: string,
  body: () => Record<string, unknown>,
  expected: Array<{ param: string; code: string }>,
];

describe('POST /awards validation: the real call and both dry runs give the same 422, and nothing is written', () => {
  const cases: Case[] = [
    // award_cycle_id
    [
      'award_cycle_id missing',
      () => awardBody({ award_cycle_id: undefined }),
      [{ param: 'award_cycle_id', code: 'required' }],
    ],
    [
      'award_cycle_id as a string',
      () => awardBody({ award_cycle_id: String(ids.openCycle) }),
      [{ param: 'award_cycle_id', code: 'invalid_type' }],
    ],
    [
      'award_cycle_id of no cycle',
      () => awardBody({ award_cycle_id: 987654 }),
      [{ param: 'award_cycle_id', code: 'reference_not_found' }],
    ],
    [
      "award_cycle_id of another institution's cycle",
      () => awardBody({ award_cycle_id: ids.otherCycle }),
      [{ param: 'award_cycle_id', code: 'reference_not_found' }],
    ],
    [
      'award_cycle_id of a draft cycle',
      () => awardBody({ award_cycle_id: ids.draftCycle }),
      [{ param: 'award_cycle_id', code: 'invalid_value' }],
    ],
    [
      'award_cycle_id of an archived cycle',
      () => awardBody({ award_cycle_id: ids.archivedCycle }),
      [{ param: 'award_cycle_id', code: 'invalid_value' }],
    ],
    // scholarship_id
    [
      'scholarship_id missing',
      () => awardBody({ scholarship_id: undefined }),
      [{ param: 'scholarship_id', code: 'required' }],
    ],
    [
      'scholarship_id of no scholarship',
      () => awardBody({ scholarship_id: 987654 }),
      [{ param: 'scholarship_id', code: 'reference_not_found' }],
    ],
    [
      "scholarship_id of another institution's scholarship",
      () => awardBody({ scholarship_id: ids.otherScholarship }),
      [{ param: 'scholarship_id', code: 'reference_not_found' }],
    ],
    [
      'scholarship_id of a retired scholarship',
      () => awardBody({ scholarship_id: ids.retiredScholarship }),
      [{ param: 'scholarship_id', code: 'reference_inactive' }],
    ],
    // student_id
    [
      'student_id missing',
      () => awardBody({ student_id: undefined }),
      [{ param: 'student_id', code: 'required' }],
    ],
    [
      'student_id zero',
      () => awardBody({ student_id: 0 }),
      [{ param: 'student_id', code: 'out_of_range' }],
    ],
    [
      'student_id of no student',
      () => awardBody({ student_id: 987654 }),
      [{ param: 'student_id', code: 'reference_not_found' }],
    ],
    [
      "student_id of another institution's student",
      () => awardBody({ student_id: ids.otherStudent }),
      [{ param: 'student_id', code: 'reference_not_found' }],
    ],
    [
      'a second live award of the scholarship to the student in the cycle',
      () => awardBody({ student_id: ids.awardedStudent }),
      [{ param: 'student_id', code: 'already_in_use' }],
    ],
    // amount
    [
      'amount missing',
      () => awardBody({ amount: undefined }),
      [{ param: 'amount', code: 'required' }],
    ],
    ['amount zero', () => awardBody({ amount: 0 }), [{ param: 'amount', code: 'out_of_range' }]],
    [
      'amount negative',
      () => awardBody({ amount: -5 }),
      [{ param: 'amount', code: 'out_of_range' }],
    ],
    [
      'amount with 3 decimal places',
      () => awardBody({ amount: 10.005 }),
      [{ param: 'amount', code: 'invalid_format' }],
    ],
    [
      'amount above the maximum',
      () => awardBody({ amount: 1_000_000_000_000 }),
      [{ param: 'amount', code: 'out_of_range' }],
    ],
    [
      'amount as a string',
      () => awardBody({ amount: '2500' }),
      [{ param: 'amount', code: 'invalid_type' }],
    ],
    // status
    [
      'status accepted on create',
      () => awardBody({ status: 'accepted' }),
      [{ param: 'status', code: 'invalid_value' }],
    ],
    [
      'status disbursed on create',
      () => awardBody({ status: 'disbursed' }),
      [{ param: 'status', code: 'invalid_value' }],
    ],
    [
      'status not allowed',
      () => awardBody({ status: 'pending' }),
      [{ param: 'status', code: 'invalid_value' }],
    ],
    // other
    [
      'an unknown field',
      () => awardBody({ fund_id: ids.fund }),
      [{ param: 'fund_id', code: 'unknown_field' }],
    ],
    [
      'several problems at once',
      () => ({
        award_cycle_id: ids.draftCycle,
        scholarship_id: ids.retiredScholarship,
        student_id: ids.otherStudent,
        amount: -1,
        object: 'award',
      }),
      [
        { param: 'award_cycle_id', code: 'invalid_value' },
        { param: 'scholarship_id', code: 'reference_inactive' },
        { param: 'student_id', code: 'reference_not_found' },
        { param: 'amount', code: 'out_of_range' },
        { param: 'object', code: 'unknown_field' },
      ],
    ],
  ];

  test.each(cases)('%s', async (_name, body, expected) => {
    await expectSameErrorThreeWays('/api/v1/awards', 'POST', body(), invalid(expected));
  });
});

describe('award CRUD', () => {
  test('create answers 201 with Location and the full award, offered by default, and writes the row', async () => {
    const student = await newStudent();
    const response = await service.call<Award>('POST', '/api/v1/awards', {
      body: awardBody({ student_id: student, amount: 1234.5 }),
    });
    expect(response.status).toBe(201);
    expect(response.headers.get('Location')).toBe(`/api/v1/awards/${response.body.id}`);
    expect(response.body).toEqual({
      id: expect.any(Number),
      object: 'award',
      award_cycle_id: ids.openCycle,
      scholarship_id: ids.scholarship,
      student_id: student,
      amount: 1234.5,
      status: 'offered',
      created_at: expect.stringMatching(ISO_MS),
      updated_at: expect.stringMatching(ISO_MS),
    });
    expect(await awardRow(response.body.id)).toMatchObject({
      award_cycle_id: ids.openCycle,
      scholarship_id: ids.scholarship,
      student_id: student,
      amount: '1234.50',
      status: 'offered',
    });
  });

  test('an award may be made in a closed cycle, and status offered may be sent', async () => {
    const award = await createAward({ award_cycle_id: ids.closedCycle, status: 'offered' });
    expect(award).toMatchObject({ award_cycle_id: ids.closedCycle, status: 'offered' });
  });

  test('a dry-run create answers 201 with id 0 and the real body, without Location, a row or holding the place', async () => {
    const body = awardBody({ student_id: await newStudent(), amount: 99.99 });
    const before = await service.count('awards');
    const dry = await service.call<Award>('POST', '/api/v1/awards?dry_run=true', { body });
    expect(dry.status).toBe(201);
    expect(dry.body.id).toBe(0);
    expect(dry.headers.get('Location')).toBeNull();
    expect(await service.count('awards')).toBe(before);

    const real = await service.call<Award>('POST', '/api/v1/awards', { body });
    expect(real.status).toBe(201);
    const strip = (award: Award) => ({
      ...award,
      id: undefined,
      created_at: undefined,
      updated_at: undefined,
    });
    expect(strip(dry.body)).toEqual(strip(real.body));
  });

  test('retrieve returns the award as created', async () => {
    const award = await createAward({ amount: 0.01 });
    const fetched = await service.call<Award>('GET', `/api/v1/awards/${award.id}`);
    expect(fetched.status).toBe(200);
    expect(fetched.body).toEqual(award);
  });

  test('PATCH merges the sent fields and stores the amount exactly', async () => {
    const award = await createAward();
    const patched = await patchAward(award.id, {
      amount: 3000.1,
      scholarship_id: ids.secondScholarship,
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toEqual({
      ...award,
      amount: 3000.1,
      scholarship_id: ids.secondScholarship,
      updated_at: expect.stringMatching(ISO_MS),
    });
    expect(await awardRow(award.id)).toMatchObject({
      amount: '3000.10',
      scholarship_id: ids.secondScholarship,
      award_cycle_id: ids.openCycle,
    });
  });

  test('a dry-run PATCH returns the would-be award and changes nothing', async () => {
    const award = await createAward();
    const before = await awardRow(award.id);
    const dry = await service.call<Award>('PATCH', `/api/v1/awards/${award.id}`, {
      body: { status: 'accepted', amount: 10 },
      headers: { 'Dry-Run': 'true' },
    });
    expect(dry.status).toBe(200);
    expect(dry.body).toEqual({
      ...award,
      status: 'accepted',
      amount: 10,
      updated_at: expect.stringMatching(ISO_MS),
    });
    expect(await awardRow(award.id)).toEqual(before);
  });

  test('awards have no DELETE: 405 with an Allow header, and the award stays', async () => {
    const award = await createAward();
    const response = await service.call<ErrorEnvelope>('DELETE', `/api/v1/awards/${award.id}`);
    expect(response.status).toBe(405);
    expect(response.headers.get('Allow')).toBe('GET, PATCH');
    expect(await awardRow(award.id)).not.toBeNull();
  });
});

describe('one live award per cycle, scholarship and student', () => {
  test('a declined or cancelled award frees the place for a new offer', async () => {
    for (const final of ['declined', 'cancelled']) {
      const first = await createAward();
      const again = awardBody({ student_id: first.student_id });
      const refused = await service.call('POST', '/api/v1/awards', { body: again });
      expect(refused.status).toBe(422);
      expect(fieldErrors(refused)).toEqual([{ param: 'student_id', code: 'already_in_use' }]);

      await ok(patchAward(first.id, { status: final }));
      const second = await service.call<Award>('POST', '/api/v1/awards', { body: again });
      expect(second.status).toBe(201);
      expect(second.body.status).toBe('offered');
    }
  });

  test('an accepted or disbursed award still holds the place', async () => {
    for (const status of ['accepted', 'disbursed']) {
      const award = await awardIn(status);
      const refused = await service.call('POST', '/api/v1/awards', {
        body: awardBody({ student_id: award.student_id }),
      });
      expect(fieldErrors(refused)).toEqual([{ param: 'student_id', code: 'already_in_use' }]);
    }
  });

  test('the same student may hold the scholarship in another cycle, and another scholarship in this cycle', async () => {
    const first = await createAward();
    const otherCycle = await service.call('POST', '/api/v1/awards', {
      body: awardBody({ student_id: first.student_id, award_cycle_id: ids.secondOpenCycle }),
    });
    const otherScholarship = await service.call('POST', '/api/v1/awards', {
      body: awardBody({ student_id: first.student_id, scholarship_id: ids.secondScholarship }),
    });
    expect([otherCycle.status, otherScholarship.status]).toEqual([201, 201]);
  });

  test('PATCH cannot move a live award onto a place another live award holds (three ways, nothing changes)', async () => {
    const holder = await createAward();
    const mover = await createAward({ scholarship_id: ids.secondScholarship });
    await expectSameErrorThreeWays(
      `/api/v1/awards/${mover.id}`,
      'PATCH',
      { student_id: holder.student_id, scholarship_id: ids.scholarship },
      invalid([{ param: 'student_id', code: 'already_in_use' }]),
    );
  });

  test('a declined award may be moved onto a place another live award holds: it does not hold it', async () => {
    const holder = await createAward();
    const declined = await createAward({ scholarship_id: ids.secondScholarship });
    await ok(patchAward(declined.id, { status: 'declined' }));
    const moved = await patchAward(declined.id, {
      student_id: holder.student_id,
      scholarship_id: ids.scholarship,
    });
    expect(moved.status).toBe(200);
  });

  test('concurrent creates for one place: exactly one 201, the rest 422 already_in_use', async () => {
    const body = awardBody({ student_id: await newStudent() });
    const responses = await Promise.all(
      [1, 2, 3, 4, 5].map(() => service.call('POST', '/api/v1/awards', { body })),
    );
    expect(responses.map((response) => response.status).sort()).toEqual([201, 422, 422, 422, 422]);
    for (const response of responses.filter((r) => r.status === 422)) {
      expect(fieldErrors(response)).toEqual([{ param: 'student_id', code: 'already_in_use' }]);
    }
    const rows = await service.db.oneFirst(
      sql.unsafe`SELECT count(*)::int FROM awards WHERE student_id = ${Number(body.student_id)}`,
    );
    expect(rows).toBe(1);
  });
});

describe('the award state machine', () => {
  const allowed: Array<[from: string, to: string]> = [
    ['offered', 'accepted'],
    ['offered', 'declined'],
    ['offered', 'cancelled'],
    ['accepted', 'disbursed'],
    ['accepted', 'cancelled'],
    ['offered', 'offered'],
    ['accepted', 'accepted'],
    ['declined', 'declined'],
    ['disbursed', 'disbursed'],
  ];

  test.each(allowed)(
    '%s -> %s is allowed: 200 and stored; its dry run answers the same without storing',
    async (from, to) => {
      const award = await awardIn(from);
      const before = await awardRow(award.id);
      const dry = await service.call<Award>('PATCH', `/api/v1/awards/${award.id}?dry_run=true`, {
        body: { status: to },
      });
      expect(dry.status).toBe(200);
      expect(dry.body.status).toBe(to);
      expect(await awardRow(award.id)).toEqual(before);

      const real = await patchAward(award.id, { status: to });
      expect(real.status).toBe(200);
      expect(real.body).toEqual({ ...dry.body, updated_at: expect.stringMatching(ISO_MS) });
      expect((await awardRow(award.id))?.status).toBe(to);
    },
  );

  const refused: Array<[from: string, to: string]> = [
    ['offered', 'disbursed'],
    ['accepted', 'offered'],
    ['accepted', 'declined'],
    ['declined', 'offered'],
    ['declined', 'accepted'],
    ['declined', 'cancelled'],
    ['declined', 'disbursed'],
    ['cancelled', 'offered'],
    ['cancelled', 'accepted'],
    ['cancelled', 'declined'],
    ['cancelled', 'disbursed'],
    ['disbursed', 'offered'],
    ['disbursed', 'accepted'],
    ['disbursed', 'declined'],
    ['disbursed', 'cancelled'],
  ];

  test.each(refused)(
    '%s -> %s is refused: 409 invalid_state_transition three ways, nothing changes',
    async (from, to) => {
      const award = await awardIn(from);
      await expectSameErrorThreeWays(
        `/api/v1/awards/${award.id}`,
        'PATCH',
        { status: to },
        {
          status: 409,
          code: 'invalid_state_transition',
        },
      );
    },
  );

  test('a refused transition is a 409 even when other fields are also wrong', async () => {
    const award = await awardIn('declined');
    await expectSameErrorThreeWays(
      `/api/v1/awards/${award.id}`,
      'PATCH',
      { status: 'accepted', amount: -1 },
      { status: 409, code: 'invalid_state_transition' },
    );
  });

  test('a final award’s amount may still be corrected, since that commits nothing', async () => {
    const award = await awardIn('declined');
    const patched = await patchAward(award.id, { amount: 1 });
    expect(patched.status).toBe(200);
    expect((await awardRow(award.id))?.amount).toBe('1.00');
  });
});

describe('references are checked where they are set or changed', () => {
  test('an award whose scholarship was retired later can still be accepted and disbursed', async () => {
    const scholarship = await post('/api/v1/scholarships', { name: 'Retires', fund_id: ids.fund });
    const award = await createAward({ scholarship_id: scholarship.id });
    await ok(
      service.call('PATCH', `/api/v1/scholarships/${scholarship.id}`, {
        body: { status: 'retired' },
      }),
    );
    expect(
      (await patchAward(award.id, { status: 'accepted', scholarship_id: scholarship.id })).status,
    ).toBe(200);
    expect((await patchAward(award.id, { status: 'disbursed' })).status).toBe(200);
  });

  test('a retired scholarship takes no new awards until it is active again', async () => {
    const scholarship = await post('/api/v1/scholarships', {
      name: 'Paused',
      fund_id: ids.fund,
      status: 'retired',
    });
    const body = awardBody({ student_id: await newStudent(), scholarship_id: scholarship.id });
    const refused = await service.call('POST', '/api/v1/awards', { body });
    expect(fieldErrors(refused)).toEqual([{ param: 'scholarship_id', code: 'reference_inactive' }]);
    await ok(
      service.call('PATCH', `/api/v1/scholarships/${scholarship.id}`, {
        body: { status: 'active' },
      }),
    );
    expect((await service.call('POST', '/api/v1/awards', { body })).status).toBe(201);
  });

  test('an award in a cycle that was closed later can still move through its states', async () => {
    const cycle = await newCycle('open');
    const award = await createAward({ award_cycle_id: cycle });
    await patchCycle(cycle, 'closed');
    expect((await patchAward(award.id, { status: 'accepted', award_cycle_id: cycle })).status).toBe(
      200,
    );
  });

  const moves: Case[] = [
    [
      'to a draft cycle',
      () => ({ award_cycle_id: ids.draftCycle }),
      [{ param: 'award_cycle_id', code: 'invalid_value' }],
    ],
    [
      'to an archived cycle',
      () => ({ award_cycle_id: ids.archivedCycle }),
      [{ param: 'award_cycle_id', code: 'invalid_value' }],
    ],
    [
      "to another institution's cycle",
      () => ({ award_cycle_id: ids.otherCycle }),
      [{ param: 'award_cycle_id', code: 'reference_not_found' }],
    ],
    [
      'to a retired scholarship',
      () => ({ scholarship_id: ids.retiredScholarship }),
      [{ param: 'scholarship_id', code: 'reference_inactive' }],
    ],
    [
      "to another institution's scholarship",
      () => ({ scholarship_id: ids.otherScholarship }),
      [{ param: 'scholarship_id', code: 'reference_not_found' }],
    ],
    [
      "to another institution's student",
      () => ({ student_id: ids.otherStudent }),
      [{ param: 'student_id', code: 'reference_not_found' }],
    ],
    ['clearing the amount', () => ({ amount: null }), [{ param: 'amount', code: 'required' }]],
    [
      'a read-only field',
      () => ({ created_at: '2026-01-01T00:00:00.000Z' }),
      [{ param: 'created_at', code: 'unknown_field' }],
    ],
  ];

  test.each(moves)(
    'PATCH moving an award %s: same 422 three ways, nothing changes',
    async (_name, body, expected) => {
      const award = await createAward();
      await expectSameErrorThreeWays(
        `/api/v1/awards/${award.id}`,
        'PATCH',
        body(),
        invalid(expected),
      );
    },
  );
});

describe('awards in an archived cycle', () => {
  let cycle = 0;
  const awards: Record<string, Award> = {};
  beforeAll(async () => {
    cycle = await newCycle('open');
    awards.offered = await createAward({ award_cycle_id: cycle });
    awards.accepted = await createAward({ award_cycle_id: cycle });
    await ok(patchAward(awards.accepted.id, { status: 'accepted' }));
    await patchCycle(cycle, 'closed');
    await patchCycle(cycle, 'archived');
  });

  const changes: Array<[string, string, Record<string, unknown>]> = [
    ['accepting an offered award', 'offered', { status: 'accepted' }],
    ['declining an offered award', 'offered', { status: 'declined' }],
    ['disbursing an accepted award', 'accepted', { status: 'disbursed' }],
    ['changing the amount', 'offered', { amount: 1 }],
    ['moving it to an open cycle', 'offered', { award_cycle_id: ids.openCycle }],
    ['an empty body', 'accepted', {}],
    ['an invalid body', 'accepted', { amount: 'lots' }],
  ];

  test.each(changes)(
    'refuse %s: 409 resource_archived three ways, nothing changes',
    async (_name, which, body) => {
      const award = awards[which];
      if (!award) throw new Error(`no ${which} award`);
      await expectSameErrorThreeWays(`/api/v1/awards/${award.id}`, 'PATCH', body, {
        status: 409,
        code: 'resource_archived',
      });
    },
  );

  test('are still readable', async () => {
    const fetched = await service.call<Award>('GET', `/api/v1/awards/${awards.accepted?.id}`);
    expect(fetched.status).toBe(200);
    expect(fetched.body.status).toBe('accepted');
  });
});

describe('idempotency on award writes', () => {
  test('a create retried with the same key replays the first answer and writes one row', async () => {
    const body = awardBody({ student_id: await newStudent() });
    const headers = { 'Idempotency-Key': `award-${++counter}` };
    const first = await service.call<Award>('POST', '/api/v1/awards', { body, headers });
    const again = await service.call<Award>('POST', '/api/v1/awards', { body, headers });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('Idempotent-Replayed')).toBe('true');
    expect(again.headers.get('Location')).toBe(first.headers.get('Location'));
    const rows = await service.db.oneFirst(
      sql.unsafe`SELECT count(*)::int FROM awards WHERE student_id = ${Number(body.student_id)}`,
    );
    expect(rows).toBe(1);
  });

  test('a dry run does not use up the key; a refused transition leaves it free', async () => {
    const award = await createAward();
    const headers = { 'Idempotency-Key': `transition-${++counter}` };
    const refused = await service.call('PATCH', `/api/v1/awards/${award.id}`, {
      body: { status: 'disbursed' },
      headers,
    });
    expect(refused.status).toBe(409);
    const dry = await service.call('PATCH', `/api/v1/awards/${award.id}?dry_run=true`, {
      body: { status: 'accepted' },
      headers,
    });
    expect(dry.status).toBe(200);
    const real = await service.call<Award>('PATCH', `/api/v1/awards/${award.id}`, {
      body: { status: 'accepted' },
      headers,
    });
    expect(real.status).toBe(200);
    expect(real.headers.get('Idempotent-Replayed')).toBeNull();
    expect((await awardRow(award.id))?.status).toBe('accepted');
    const replay = await service.call<Award>('PATCH', `/api/v1/awards/${award.id}`, {
      body: { status: 'accepted' },
      headers,
    });
    expect(replay.headers.get('Idempotent-Replayed')).toBe('true');
    expect(replay.body).toEqual(real.body);
  });
});

describe('an award that is not the caller’s is not found', () => {
  const unknownIds: Array<[string, () => string]> = [
    ['an unknown id', () => '987654'],
    ['a non-numeric id', () => 'abc'],
    ["another institution's award", () => String(ids.otherAward)],
  ];
  const calls: Array<[string, string, Record<string, unknown> | undefined]> = [
    ['GET', '', undefined],
    ['PATCH', '', { status: 'cancelled' }],
    ['PATCH', '?dry_run=true', { status: 'cancelled' }],
  ];
  const table = unknownIds.flatMap(([what, id]) =>
    calls.map(
      ([method, query, body]) => [`${method}${query} of ${what}`, method, query, body, id] as const,
    ),
  );

  test.each(table)('%s answers 404 resource_not_found', async (_name, method, query, body, id) => {
    const response = await service.call<ErrorEnvelope>(method, `/api/v1/awards/${id()}${query}`, {
      body,
    });
    expect(response.status).toBe(404);
    expect(response.body.error).toMatchObject({
      type: 'invalid_request_error',
      code: 'resource_not_found',
    });
  });

  test("another institution's award is untouched", async () => {
    expect(await awardRow(ids.otherAward)).toMatchObject({ status: 'offered', amount: '10.00' });
  });
});
