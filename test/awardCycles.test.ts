import { sql } from 'slonik';
import {
  expectSameErrorThreeWays,
  invalid,
  fieldErrors,
  type ErrorEnvelope,
} from './helpers/threeWays.js';
import { startTestService, type Tenant, type TestService } from './helpers/harness.js';
import { created, ISO_MS } from './helpers/responses.js';

interface AwardCycle {
  id: number;
  object: string;
  name: string;
  starts_on: string;
  ends_on: string;
  status: string;
  created_at: string;
  updated_at: string;
}

let service: TestService;
let other: Tenant;
const ids = { otherCycle: 0 };
let nameCounter = 0;

/** A cycle with a fresh name; overrides win. */
const createCycle = (body: Record<string, unknown> = {}, key?: string) =>
  created<AwardCycle>(
    service.call('POST', '/api/v1/award-cycles', {
      key,
      body: {
        name: `Cycle ${++nameCounter}`,
        starts_on: '2026-09-01',
        ends_on: '2027-06-30',
        ...body,
      },
    }),
  );

const patchCycle = (id: number, body: Record<string, unknown>) =>
  service.call<AwardCycle>('PATCH', `/api/v1/award-cycles/${id}`, { body });

/** A cycle brought to `status` through transitions the machine allows. */
async function cycleIn(status: string): Promise<AwardCycle> {
  const paths: Record<string, string[]> = {
    draft: [],
    open: [],
    closed: ['closed'],
    archived: ['closed', 'archived'],
  };
  let cycle = await createCycle({ status: status === 'draft' ? 'draft' : 'open' });
  for (const next of paths[status] ?? []) {
    const response = await patchCycle(cycle.id, { status: next });
    if (response.status !== 200) throw new Error(`could not move to ${next}`);
    cycle = response.body;
  }
  return cycle;
}

/** A valid cycle body whose name is free; an `undefined` override drops the field. */
const cycleBody = (overrides: Record<string, unknown> = {}): Record<string, unknown> => ({
  name: 'Never created',
  starts_on: '2026-01-01',
  ends_on: '2026-12-31',
  ...overrides,
});

interface StoredCycle {
  name: string;
  starts_on: string;
  ends_on: string;
  status: string;
  updated_at: string;
}

async function cycleRow(id: number): Promise<StoredCycle | null> {
  const row = await service.db.maybeOne(sql.unsafe`
    SELECT name, starts_on::text AS starts_on, ends_on::text AS ends_on, status, updated_at
    FROM award_cycles WHERE id = ${id}`);
  return row as StoredCycle | null;
}

beforeAll(async () => {
  service = await startTestService();
  other = await service.createTenant('Other College', 'USD');
  await createCycle({ name: 'Taken Cycle' });
  ids.otherCycle = (await createCycle({ name: 'Their cycle' }, other.key)).id;
});

afterAll(async () => {
  await service?.close();
});

type Case = [
  name: string,
  body: Record<string, unknown>,
  expected: Array<{ param: string; code: string }>,
];

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

describe('award cycle CRUD', () => {
  test('create answers 201 with Location and the full cycle, draft by default, and writes the row', async () => {
    const response = await service.call<AwardCycle>('POST', '/api/v1/award-cycles', {
      body: { name: '  Fall 2026 ', starts_on: '2026-09-01', ends_on: '2026-12-15' },
    });
    expect(response.status).toBe(201);
    expect(response.headers.get('Location')).toBe(`/api/v1/award-cycles/${response.body.id}`);
    expect(response.body).toEqual({
      id: expect.any(Number),
      object: 'award_cycle',
      name: 'Fall 2026',
      starts_on: '2026-09-01',
      ends_on: '2026-12-15',
      status: 'draft',
      created_at: expect.stringMatching(ISO_MS),
      updated_at: expect.stringMatching(ISO_MS),
    });
    expect(await cycleRow(response.body.id)).toMatchObject({
      name: 'Fall 2026',
      starts_on: '2026-09-01',
      ends_on: '2026-12-15',
      status: 'draft',
    });
  });

  test.each(['draft', 'open'])('create may start a cycle as %s', async (status) => {
    const cycle = await createCycle({ status });
    expect(cycle.status).toBe(status);
    expect((await cycleRow(cycle.id))?.status).toBe(status);
  });

  test('a cycle may start and end on the same day, and leap days are real dates', async () => {
    const cycle = await createCycle({ starts_on: '2028-02-29', ends_on: '2028-02-29' });
    expect(cycle).toMatchObject({ starts_on: '2028-02-29', ends_on: '2028-02-29' });
  });

  test('a dry-run create answers 201 with id 0 and the real body, without Location, a row or holding the name', async () => {
    const body = {
      name: 'Spring 2027',
      starts_on: '2027-01-10',
      ends_on: '2027-05-20',
      status: 'open',
    };
    const before = await service.count('award_cycles');
    const dry = await service.call<AwardCycle>('POST', '/api/v1/award-cycles?dry_run=true', {
      body,
    });
    expect(dry.status).toBe(201);
    expect(dry.body.id).toBe(0);
    expect(dry.headers.get('Location')).toBeNull();
    expect(await service.count('award_cycles')).toBe(before);

    const real = await service.call<AwardCycle>('POST', '/api/v1/award-cycles', { body });
    expect(real.status).toBe(201);
    const strip = (cycle: AwardCycle) => ({
      ...cycle,
      id: undefined,
      created_at: undefined,
      updated_at: undefined,
    });
    expect(strip(dry.body)).toEqual(strip(real.body));
  });

  test('retrieve returns the cycle as created', async () => {
    const cycle = await createCycle();
    const fetched = await service.call<AwardCycle>('GET', `/api/v1/award-cycles/${cycle.id}`);
    expect(fetched.status).toBe(200);
    expect(fetched.body).toEqual(cycle);
  });

  test('PATCH merges the sent fields and may resend the cycle’s own name', async () => {
    const cycle = await createCycle({ name: 'Merge me' });
    const patched = await patchCycle(cycle.id, { name: 'Merge me', ends_on: '2027-07-31' });
    expect(patched.status).toBe(200);
    expect(patched.body).toEqual({
      ...cycle,
      ends_on: '2027-07-31',
      updated_at: expect.stringMatching(ISO_MS),
    });
    expect(await cycleRow(cycle.id)).toMatchObject({
      name: 'Merge me',
      starts_on: '2026-09-01',
      ends_on: '2027-07-31',
    });
  });

  test('a dry-run PATCH returns the would-be cycle and changes nothing', async () => {
    const cycle = await createCycle();
    const before = await cycleRow(cycle.id);
    const dry = await service.call<AwardCycle>(
      'PATCH',
      `/api/v1/award-cycles/${cycle.id}?dry_run=true`,
      {
        body: { name: 'Preview', status: 'open' },
      },
    );
    expect(dry.status).toBe(200);
    expect(dry.body).toEqual({
      ...cycle,
      name: 'Preview',
      status: 'open',
      updated_at: expect.stringMatching(ISO_MS),
    });
    expect(await cycleRow(cycle.id)).toEqual(before);
  });

  test('two concurrent creates with one name: one 201, the other 422 already_in_use', async () => {
    const body = { name: 'Race cycle', starts_on: '2026-01-01', ends_on: '2026-02-01' };
    const responses = await Promise.all(
      [1, 2, 3, 4].map(() => service.call('POST', '/api/v1/award-cycles', { body })),
    );
    const statuses = responses.map((response) => response.status).sort();
    expect(statuses).toEqual([201, 422, 422, 422]);
    for (const response of responses.filter((r) => r.status === 422)) {
      expect(fieldErrors(response)).toEqual([{ param: 'name', code: 'already_in_use' }]);
    }
    const rows = await service.db.oneFirst(
      sql.unsafe`SELECT count(*)::int FROM award_cycles WHERE name = 'Race cycle'`,
    );
    expect(rows).toBe(1);
  });

  test('award cycles have no DELETE: 405 with an Allow header, and the cycle stays', async () => {
    const cycle = await createCycle();
    const response = await service.call<ErrorEnvelope>(
      'DELETE',
      `/api/v1/award-cycles/${cycle.id}`,
    );
    expect(response.status).toBe(405);
    expect(response.headers.get('Allow')).toBe('GET, PATCH');
    expect(response.body.error.code).toBe('method_not_allowed');
    expect(await cycleRow(cycle.id)).not.toBeNull();
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

describe('the award cycle state machine', () => {
  const allowed: Array<[from: string, to: string]> = [
    ['draft', 'open'],
    ['draft', 'archived'],
    ['open', 'closed'],
    ['closed', 'open'],
    ['closed', 'archived'],
    ['draft', 'draft'],
    ['open', 'open'],
    ['closed', 'closed'],
  ];

  test.each(allowed)(
    '%s -> %s is allowed: 200, stored, and its dry run answers the same without storing',
    async (from, to) => {
      const cycle = await cycleIn(from);
      const before = await cycleRow(cycle.id);
      const dry = await service.call<AwardCycle>('PATCH', `/api/v1/award-cycles/${cycle.id}`, {
        body: { status: to },
        headers: { 'Dry-Run': 'true' },
      });
      expect(dry.status).toBe(200);
      expect(dry.body.status).toBe(to);
      expect(await cycleRow(cycle.id)).toEqual(before);

      const real = await patchCycle(cycle.id, { status: to });
      expect(real.status).toBe(200);
      expect(real.body).toEqual({ ...dry.body, updated_at: expect.stringMatching(ISO_MS) });
      expect((await cycleRow(cycle.id))?.status).toBe(to);
    },
  );

  const refused: Array<[from: string, to: string]> = [
    ['draft', 'closed'],
    ['open', 'draft'],
    ['open', 'archived'],
    ['closed', 'draft'],
  ];

  test.each(refused)(
    '%s -> %s is refused: 409 invalid_state_transition three ways, nothing changes',
    async (from, to) => {
      const cycle = await cycleIn(from);
      await expectSameErrorThreeWays(
        service,
        `/api/v1/award-cycles/${cycle.id}`,
        'PATCH',
        { status: to },
        { status: 409, code: 'invalid_state_transition' },
        () => cycleRow(cycle.id),
      );
      const real = await patchCycle(cycle.id, { status: to });
      expect((real.body as unknown as ErrorEnvelope).error.param).toBe('status');
    },
  );

  test('a refused transition is a 409 even when other fields are also wrong', async () => {
    const cycle = await cycleIn('open');
    await expectSameErrorThreeWays(
      service,
      `/api/v1/award-cycles/${cycle.id}`,
      'PATCH',
      { status: 'draft', name: '' },
      { status: 409, code: 'invalid_state_transition' },
      () => cycleRow(cycle.id),
    );
  });

  const archivedChanges: Array<[string, Record<string, unknown>]> = [
    ['reopening it', { status: 'open' }],
    ['closing it', { status: 'closed' }],
    ['resending archived', { status: 'archived' }],
    ['renaming it', { name: 'Renamed archive' }],
    ['moving its dates', { ends_on: '2030-01-01' }],
    ['an empty body', {}],
    ['an invalid body', { name: '', starts_on: 'soon' }],
  ];

  test.each(archivedChanges)(
    'an archived cycle refuses %s: 409 resource_archived three ways',
    async (_name, body) => {
      const cycle = await cycleIn('archived');
      await expectSameErrorThreeWays(
        service,
        `/api/v1/award-cycles/${cycle.id}`,
        'PATCH',
        body,
        { status: 409, code: 'resource_archived' },
        () => cycleRow(cycle.id),
      );
    },
  );

  test('an archived cycle is still readable', async () => {
    const cycle = await cycleIn('archived');
    const fetched = await service.call<AwardCycle>('GET', `/api/v1/award-cycles/${cycle.id}`);
    expect(fetched.status).toBe(200);
    expect(fetched.body.status).toBe('archived');
  });
});

describe('an award cycle that is not the caller’s is not found', () => {
  const unknownIds: Array<[string, () => string]> = [
    ['an unknown id', () => '987654'],
    ['a non-numeric id', () => 'abc'],
    ['id 0', () => '0'],
    ["another institution's cycle", () => String(ids.otherCycle)],
  ];
  const calls: Array<[string, string, Record<string, unknown> | undefined]> = [
    ['GET', '', undefined],
    ['PATCH', '', { name: 'Hijack' }],
    ['PATCH', '?dry_run=true', { name: 'Hijack' }],
  ];
  const table = unknownIds.flatMap(([what, id]) =>
    calls.map(
      ([method, query, body]) => [`${method}${query} of ${what}`, method, query, body, id] as const,
    ),
  );

  test.each(table)('%s answers 404 resource_not_found', async (_name, method, query, body, id) => {
    const response = await service.call<ErrorEnvelope>(
      method,
      `/api/v1/award-cycles/${id()}${query}`,
      { body },
    );
    expect(response.status).toBe(404);
    expect(response.body.error).toMatchObject({
      type: 'invalid_request_error',
      code: 'resource_not_found',
    });
  });

  test("another institution's cycle is untouched, and its name is free here", async () => {
    expect(await cycleRow(ids.otherCycle)).toMatchObject({ name: 'Their cycle', status: 'draft' });
    const mine = await createCycle({ name: 'Their cycle' });
    expect(mine.name).toBe('Their cycle');
  });
});
