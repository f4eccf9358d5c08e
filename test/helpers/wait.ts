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
  let current = 'starting';
  const phases: string[] = [];
  const phase = (name: string) => {
    phases.push(`${name} at ${((Date.now() - started) / 1000).toFixed(1)} s`);
    current = name;
  };
  let timer: NodeJS.Timeout | undefined;
  const overdue = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(new Error(`set-up still ${current} after ${ms / 1000} s (${phases.join('; ')})`)),
      ms,
    );
  });
  try {
    await Promise.race([run(phase), overdue]);
  } finally {
    clearTimeout(timer);
  }
}
