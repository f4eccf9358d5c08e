import { Writable } from 'node:stream';
import { pino } from 'pino';
import { closeParts } from '../../common/shutdown.js';

/**
 * A stopping process closes its queues and listeners side by side; one that fails or hangs (its
 * Redis is frozen) is logged and left behind, so the stop stays clean and bounded. The whole
 * processes are tested in test/shutdown.test.ts.
 */

function recordingLogger() {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino({ level: 'info' }, stream), lines };
}

test('every part is closed, side by side, and nothing is logged when all close', async () => {
  const { logger, lines } = recordingLogger();
  const steps: string[] = [];
  const part = (name: string) => async () => {
    steps.push(`${name} closing`);
    await new Promise((resolve) => setTimeout(resolve, 10));
    steps.push(`${name} closed`);
  };
  await closeParts({ a: part('a'), b: part('b'), c: part('c') }, logger, 1_000);
  expect(steps.slice(0, 3)).toEqual(['a closing', 'b closing', 'c closing']);
  expect(steps.slice(3).sort()).toEqual(['a closed', 'b closed', 'c closed']);
  expect(lines).toEqual([]);
});

test('a part that fails is logged by name and the others still close', async () => {
  const { logger, lines } = recordingLogger();
  let othersClosed = false;
  await closeParts(
    {
      writes: () => Promise.reject(new Error('Command timed out')),
      imports: async () => {
        othersClosed = true;
      },
    },
    logger,
    1_000,
  );
  expect(othersClosed).toBe(true);
  expect(lines).toEqual([
    expect.objectContaining({
      part: 'writes',
      msg: 'close failed; left behind',
      err: expect.objectContaining({ message: 'Command timed out' }),
    }),
  ]);
});

test('a part still closing after the grace is left behind, named, and the close returns', async () => {
  const { logger, lines } = recordingLogger();
  const started = Date.now();
  await closeParts(
    { maintenance: () => new Promise(() => {}), writes: () => Promise.resolve() },
    logger,
    50,
  );
  expect(Date.now() - started).toBeGreaterThanOrEqual(45);
  expect(lines).toEqual([
    expect.objectContaining({
      parts: ['maintenance'],
      graceMs: 50,
      msg: 'did not close in time; left behind',
    }),
  ]);
});
