// Award cycle statuses: the state machine, and what an archived cycle refuses.
import { expectSameErrorThreeWays, type ErrorEnvelope } from './helpers/threeWays.js';
import { ISO_MS } from './helpers/responses.js';
import {
  cycleIn,
  cycleRow,
  patchCycle,
  service,
  setUpAwardCycleTests,
  type AwardCycle,
} from './helpers/awardCycles.js';

setUpAwardCycleTests();

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
