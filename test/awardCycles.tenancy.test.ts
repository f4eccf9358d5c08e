import { type ErrorEnvelope } from './helpers/threeWays.js';
import {
  createCycle,
  cycleRow,
  ids,
  service,
  setUpAwardCycleTests,
} from './helpers/awardCycles.js';

setUpAwardCycleTests();

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
