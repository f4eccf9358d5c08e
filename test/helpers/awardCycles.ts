/** What the awardCycles.*.test.ts files share: the cycle shape, fixture ids and cycle helpers. */
import { sql } from 'slonik';
import { startTestService, type Tenant, type TestService } from './harness.js';
import { created } from './responses.js';

export interface AwardCycle {
  id: number;
  object: string;
  name: string;
  starts_on: string;
  ends_on: string;
  status: string;
  created_at: string;
  updated_at: string;
}

export let service: TestService;
let other: Tenant;
export const ids = { otherCycle: 0 };
let nameCounter = 0;

/** A cycle with a fresh name; overrides win. */
export const createCycle = (body: Record<string, unknown> = {}, key?: string) =>
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

export const patchCycle = (id: number, body: Record<string, unknown>) =>
  service.call<AwardCycle>('PATCH', `/api/v1/award-cycles/${id}`, { body });

/** A cycle brought to `status` through transitions the machine allows. */
export async function cycleIn(status: string): Promise<AwardCycle> {
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
export const cycleBody = (overrides: Record<string, unknown> = {}): Record<string, unknown> => ({
  name: 'Never created',
  starts_on: '2026-01-01',
  ends_on: '2026-12-31',
  ...overrides,
});

export interface StoredCycle {
  name: string;
  starts_on: string;
  ends_on: string;
  status: string;
  updated_at: string;
}

export async function cycleRow(id: number): Promise<StoredCycle | null> {
  const row = await service.db.maybeOne(sql.unsafe`
    SELECT name, starts_on::text AS starts_on, ends_on::text AS ends_on, status, updated_at
    FROM award_cycles WHERE id = ${id}`);
  return row as StoredCycle | null;
}

/** Starts the file's own service and creates the ids above; call once at the top of a test file. */
export function setUpAwardCycleTests(): void {
  beforeAll(async () => {
    service = await startTestService();
    other = await service.createTenant('Other College', 'USD');
    await createCycle({ name: 'Taken Cycle' });
    ids.otherCycle = (await createCycle({ name: 'Their cycle' }, other.key)).id;
  });

  afterAll(async () => {
    await service?.close();
  });
}

export type Case = [
  name: string,
  body: Record<string, unknown>,
  expected: Array<{ param: string; code: string }>,
];
