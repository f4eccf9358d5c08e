import { within } from '../../common/deadline.js';
import { withinPhases } from '../helpers/wait.js';

/** The one bounded wait behind start-up, shutdown, the dev services' stop and the tests' set-ups. */

const after = <T>(ms: number, value: T) =>
  new Promise<T>((resolve) => setTimeout(() => resolve(value), ms));

test('work done in time gives its own value', async () => {
  await expect(within(after(10, 'closed'), 1_000, () => 'late')).resolves.toBe('closed');
});

test("work still running when the time is up gives late's value", async () => {
  await expect(within(after(1_000, 'closed'), 20, () => 'late')).resolves.toBe('late');
});

test('what late throws, the wait rejects with', async () => {
  const late = () => {
    throw new Error('not ready');
  };
  await expect(within(new Promise(() => {}), 20, late)).rejects.toThrow('not ready');
});

test('work that fails in time fails with its own error', async () => {
  await expect(within(Promise.reject(new Error('refused')), 1_000, () => 'late')).rejects.toThrow(
    'refused',
  );
});

test("a test's set-up still running when its time is up fails naming the phase it was in", async () => {
  const setUp = async (phase: (name: string) => void) => {
    phase('starting the cluster');
    await after(5, null);
    phase('creating a donor');
    await new Promise(() => {});
  };
  await expect(withinPhases(50, setUp)).rejects.toThrow(
    /^set-up still creating a donor after 0\.05 s \(starting the cluster at 0\.0 s; creating a donor at 0\.\d s\)$/,
  );
});
