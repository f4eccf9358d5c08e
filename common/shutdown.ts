import { within } from './deadline.js';
import type { Logger } from './logger.js';

/**
 * How long a stopping process may take: under the 10 s an orchestrator (or a person at Ctrl+C)
 * waits, whatever is down. Work in flight that cannot finish by then (its Redis or Postgres is
 * gone) is abandoned, which is safe: a write's receipt makes its redelivery replay it.
 */
export const SHUTDOWN_GRACE_MS = 8_000;

/** SIGTERM/SIGINT: stop taking work, finish what is in flight, close connections, exit. */
export function onShutdown(
  logger: Logger,
  name: string,
  close: () => Promise<void>,
  graceMs = SHUTDOWN_GRACE_MS,
): void {
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, `${name} shutting down`);
    const force = setTimeout(() => {
      logger.error(`${name} did not finish within ${graceMs} ms; exiting`);
      process.exit(1);
    }, graceMs);
    force.unref();
    close().then(
      () => {
        logger.info(`${name} stopped`);
        logger.flush();
        process.exit(0);
      },
      (error: unknown) => {
        logger.error({ err: error }, `${name} shutdown failed`);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

/** How long a BullMQ worker may take to close; under SHUTDOWN_GRACE_MS, with room for the rest. */
export const WORKER_CLOSE_GRACE_MS = 5_000;

/**
 * Closes a BullMQ worker: it takes no new job and lets the ones it runs finish. BullMQ's close
 * waits for its blocking connection to end, which never happens while that connection is between
 * two reconnection attempts, as after a Redis restart moments before (taskforcesh/bullmq#4656).
 * Such a close is given up after `graceMs`, and the worker's connections are dropped, so that
 * none keeps reconnecting; a job still running is abandoned, which is safe (its receipt makes a
 * redelivery replay it).
 */
export async function closeWorker(
  worker: { name: string; close(): Promise<void>; disconnect(): Promise<void> },
  logger: Logger,
  graceMs = WORKER_CLOSE_GRACE_MS,
): Promise<void> {
  if ((await within(worker.close(), graceMs, () => 'late' as const)) === 'late') {
    logger.warn({ queue: worker.name, graceMs }, 'worker did not close in time; left behind');
    // Not awaited: a connection that never ends would hold this close up again.
    void worker.disconnect().catch(() => {});
  }
}
