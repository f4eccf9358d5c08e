import fc from 'fast-check';

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
    { numRuns: options.numRuns },
  );
}
