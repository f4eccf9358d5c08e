// Award writes that fail validation, and where references to other records are checked.
import { invalid, fieldErrors } from './helpers/threeWays.js';
import {
  awardBody,
  createAward,
  expectSameErrorThreeWays,
  ids,
  newCycle,
  newStudent,
  ok,
  patchAward,
  patchCycle,
  post,
  service,
  setUpAwardTests,
  type Case,
} from './helpers/awards.js';

setUpAwardTests();

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
