import { readyWithin, StartupError } from '../../common/startupChecks.js';

/**
 * The bound on an entry point's start-up waits for Redis connections that retry for ever: what
 * gets ready in time passes through; what does not ends the start with a StartupError (one line
 * and exit code 1 from the entry point) naming what was not ready.
 */

test('a wait that ends in time gives its value', async () => {
  const ready = new Promise<string>((resolve) => setTimeout(() => resolve('subscribed'), 20));
  await expect(readyWithin('The reply subscription', ready, 1_000)).resolves.toBe('subscribed');
});

test('a wait that never ends fails as a StartupError naming what was not ready', async () => {
  const never = new Promise<void>(() => {});
  const started = Date.now();
  const failure = await readyWithin('The reply subscription', never, 100).catch(
    (error: unknown) => error,
  );
  expect(failure).toBeInstanceOf(StartupError);
  expect((failure as Error).message).toMatch(
    /^The reply subscription not ready within 0\.1 s although Redis answered the start-up check/,
  );
  expect(Date.now() - started).toBeGreaterThanOrEqual(90);
});

test("a wait that fails first fails with its own error, not the bound's", async () => {
  const refused = Promise.reject(new Error('ECONNREFUSED'));
  await expect(readyWithin('The write queues', refused, 1_000)).rejects.toThrow('ECONNREFUSED');
});
