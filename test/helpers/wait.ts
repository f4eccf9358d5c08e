import { within } from '../../common/deadline.js';

/** Polls until `check` returns true, failing the test after `timeoutMs`. */
export async function waitFor(
  check: () => Promise<boolean> | boolean,
  timeoutMs = 5_000,
  label = 'condition',
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${label}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Fails naming the phase still running when `ms` have passed, rather than leaving it to the hook's
 * timeout, which says nothing of where it stopped.
 */
export async function withinPhases(
  ms: number,
  run: (phase: (name: string) => void) => Promise<void>,
) {
  const started = Date.now();
  const phases: { name: string; at: number }[] = [];
  const phase = (name: string) => phases.push({ name, at: (Date.now() - started) / 1000 });
  await within(run(phase), ms, () => {
    const began = phases.map(({ name, at }) => `${name} at ${at.toFixed(1)} s`).join('; ');
    throw new Error(
      `set-up still ${phases.at(-1)?.name ?? 'starting'} after ${ms / 1000} s (${began})`,
    );
  });
}
