import { sql } from 'slonik';
import { fieldErrors, type ErrorEnvelope } from './helpers/threeWays.js';
import { ISO_MS } from './helpers/responses.js';
import {
  createCycle,
  cycleRow,
  patchCycle,
  service,
  setUpAwardCycleTests,
  type AwardCycle,
  ids,
} from './helpers/awardCycles.js';

setUpAwardCycleTests();

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
