// Award cycle creates and updates that fail validation: the same 422 three ways, nothing written.
import { expectSameErrorThreeWays, invalid } from './helpers/threeWays.js';
import {
  createCycle,
  cycleBody,
  cycleRow,
  service,
  setUpAwardCycleTests,
  type AwardCycle,
  type Case,
} from './helpers/awardCycles.js';

setUpAwardCycleTests();

describe('POST /award-cycles validation: the real call and both dry runs give the same 422, and nothing is written', () => {
  const cases: Case[] = [
    ['name missing', cycleBody({ name: undefined }), [{ param: 'name', code: 'required' }]],
    ['name blank', cycleBody({ name: '  ' }), [{ param: 'name', code: 'required' }]],
    [
      'name of 201 characters',
      cycleBody({ name: 'n'.repeat(201) }),
      [{ param: 'name', code: 'too_long' }],
    ],
    ['name as a number', cycleBody({ name: 2026 }), [{ param: 'name', code: 'invalid_type' }]],
    [
      'name already used',
      cycleBody({ name: 'Taken Cycle' }),
      [{ param: 'name', code: 'already_in_use' }],
    ],
    [
      'name already used in another letter case, once trimmed',
      cycleBody({ name: ' taken cycle ' }),
      [{ param: 'name', code: 'already_in_use' }],
    ],
    [
      'starts_on missing',
      cycleBody({ starts_on: undefined }),
      [{ param: 'starts_on', code: 'required' }],
    ],
    ['starts_on null', cycleBody({ starts_on: null }), [{ param: 'starts_on', code: 'required' }]],
    [
      'ends_on missing',
      cycleBody({ ends_on: undefined }),
      [{ param: 'ends_on', code: 'required' }],
    ],
    [
      'starts_on not a real date',
      cycleBody({ starts_on: '2026-02-30' }),
      [{ param: 'starts_on', code: 'invalid_format' }],
    ],
    [
      'ends_on written with slashes',
      cycleBody({ ends_on: '2026/12/31' }),
      [{ param: 'ends_on', code: 'invalid_format' }],
    ],
    [
      'ends_on with a time',
      cycleBody({ ends_on: '2026-12-31T00:00:00Z' }),
      [{ param: 'ends_on', code: 'invalid_format' }],
    ],
    [
      'starts_on as a number',
      cycleBody({ starts_on: 20260101 }),
      [{ param: 'starts_on', code: 'invalid_type' }],
    ],
    [
      'ends_on before starts_on',
      cycleBody({ starts_on: '2026-06-02', ends_on: '2026-06-01' }),
      [{ param: 'ends_on', code: 'out_of_range' }],
    ],
    [
      'status not allowed',
      cycleBody({ status: 'pending' }),
      [{ param: 'status', code: 'invalid_value' }],
    ],
    [
      'status closed on create',
      cycleBody({ status: 'closed' }),
      [{ param: 'status', code: 'invalid_value' }],
    ],
    [
      'status archived on create',
      cycleBody({ status: 'archived' }),
      [{ param: 'status', code: 'invalid_value' }],
    ],
    ['status null', cycleBody({ status: null }), [{ param: 'status', code: 'invalid_type' }]],
    ['an unknown field', cycleBody({ budget: 10 }), [{ param: 'budget', code: 'unknown_field' }]],
    ['read-only id', cycleBody({ id: 5 }), [{ param: 'id', code: 'unknown_field' }]],
    [
      'several problems at once',
      { name: 'Taken Cycle', starts_on: '2026-13-01', status: 'closed', object: 'award_cycle' },
      [
        { param: 'name', code: 'already_in_use' },
        { param: 'starts_on', code: 'invalid_format' },
        { param: 'ends_on', code: 'required' },
        { param: 'status', code: 'invalid_value' },
        { param: 'object', code: 'unknown_field' },
      ],
    ],
  ];

  test.each(cases)('%s', async (_name, body, expected) => {
    await expectSameErrorThreeWays(
      service,
      '/api/v1/award-cycles',
      'POST',
      body,
      invalid(expected),
      () => service.count('award_cycles'),
    );
  });
});

describe('PATCH /award-cycles/{id} validation on the merged record: same 422 three ways, nothing changes', () => {
  let target: AwardCycle;
  beforeAll(async () => {
    target = await createCycle({
      name: 'Patch target',
      starts_on: '2026-03-01',
      ends_on: '2026-04-01',
    });
  });

  const cases: Case[] = [
    ['another cycle’s name', { name: 'TAKEN CYCLE' }, [{ param: 'name', code: 'already_in_use' }]],
    ['name cleared', { name: null }, [{ param: 'name', code: 'required' }]],
    ['starts_on cleared', { starts_on: '' }, [{ param: 'starts_on', code: 'required' }]],
    [
      'ends_on before the stored starts_on',
      { ends_on: '2026-02-28' },
      [{ param: 'ends_on', code: 'out_of_range' }],
    ],
    [
      'starts_on after the stored ends_on',
      { starts_on: '2026-04-02' },
      [{ param: 'ends_on', code: 'out_of_range' }],
    ],
    [
      'a status that does not exist',
      { status: 'deleted' },
      [{ param: 'status', code: 'invalid_value' }],
    ],
    [
      'read-only created_at',
      { created_at: '2026-01-01T00:00:00.000Z' },
      [{ param: 'created_at', code: 'unknown_field' }],
    ],
  ];

  test.each(cases)('%s', async (_name, body, expected) => {
    await expectSameErrorThreeWays(
      service,
      `/api/v1/award-cycles/${target.id}`,
      'PATCH',
      body,
      invalid(expected),
      () => cycleRow(target.id),
    );
  });
});
