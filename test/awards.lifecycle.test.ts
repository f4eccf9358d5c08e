// Award statuses: the state machine, which statuses hold a place, awards in an archived cycle.
import { sql } from 'slonik';
import { invalid, fieldErrors } from './helpers/threeWays.js';
import { ISO_MS } from './helpers/responses.js';
import {
  awardBody,
  awardIn,
  awardRow,
  createAward,
  expectSameErrorThreeWays,
  ids,
  newCycle,
  newStudent,
  ok,
  patchAward,
  patchCycle,
  service,
  setUpAwardTests,
  type Award,
} from './helpers/awards.js';

setUpAwardTests();

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
