import { runs } from './propertyRuns.js';
import fc from 'fast-check';
import type { Tenant, TestService } from './harness.js';

/**
 * A property test's model of one tenant: set up once, then each drawn operation applied through
 * the API and every invariant checked after it.
 */
export interface StepWorld<Op> {
  setUp(): Promise<void>;
  apply(operation: Op): Promise<void>;
  check(): Promise<void>;
}

/**
 * Runs `numRuns` random sequences of operations (at least `minLength`, 1 unless given), each on a
 * new world, checking after every step.
 */
export function checkAfterEveryStep<Op>(
  op: fc.Arbitrary<Op>,
  newWorld: () => Promise<StepWorld<Op>>,
  options: { maxLength: number; numRuns: number; minLength?: number },
): Promise<void> {
  return fc.assert(
    fc.asyncProperty(
      fc.array(op, { minLength: options.minLength ?? 1, maxLength: options.maxLength }),
      async (operations) => {
        const world = await newWorld();
        await world.setUp();
        for (const operation of operations) {
          await world.apply(operation);
          await world.check();
        }
      },
    ),
    { numRuns: runs(options.numRuns) },
  );
}

/**
 * A world's calls to the API as one tenant: each write with an Idempotency-Key of its own step,
 * so that no two steps share one.
 */
export class TenantSteps {
  private step = 0;

  constructor(
    private readonly service: TestService,
    readonly tenant: Tenant,
  ) {}

  call<T = Record<string, unknown>>(method: string, path: string, body?: unknown) {
    this.step += 1;
    return this.service.call<T>(method, `/api/v1${path}`, {
      key: this.tenant.key,
      body,
      headers: body === undefined ? {} : { 'Idempotency-Key': `step-${this.step}` },
    });
  }

  /** `people` individuals, then a household they may join: their donor ids, in that order. */
  async peopleAndHousehold(people: number): Promise<number[]> {
    const ids: number[] = [];
    for (let i = 0; i < people; i += 1) {
      const person = await this.call<{ id: number }>('POST', '/donors', {
        role: 'Individual',
        first_name: 'Person',
        last_name: String(i),
      });
      expect(person.status).toBe(201);
      ids.push(person.body.id);
    }
    const household = await this.call<{ id: number }>('POST', '/donors', {
      role: 'Household',
      last_name: 'Family',
    });
    expect(household.status).toBe(201);
    return [...ids, household.body.id];
  }
}
