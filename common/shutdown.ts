import { within } from './deadline.js';
import type { Logger } from './logger.js';

/**
 * How long a stopping process may take: under the 10 s an orchestrator (or a person at Ctrl+C)
 * waits, whatever is down. Work in flight that cannot finish by then (its Redis or Postgres is
 * gone) is abandoned, which is safe: a write's receipt makes its redelivery replay it.
 */
export const SHUTDOWN_GRACE_MS = 8_000;

/** What a process stops on SIGTERM/SIGINT: no new work, what is in flight finished, connections closed. */
export interface Stoppable {
  close(): Promise<void>;
}

/**
 * Runs `start` and stops what it started on SIGTERM/SIGINT, heard from before the start: a stop
 * that comes while it starts (the moment it says it is ready, say, as a supervisor waiting for
 * that may send it) waits for the start and then closes it, rather than ending the process by
 * the signal's default in the middle of what it has begun.
 */
export function runUntilStopped<T extends Stoppable>(
  logger: Logger,
  name: string,
  start: () => Promise<T>,
): Promise<T> {
  const running = start();
  onShutdown(logger, name, async () => (await running).close());
  return running;
}

/** SIGTERM/SIGINT: stop taking work, finish what is in flight, close connections, exit. */
function onShutdown(
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
 * How long a process's queues, their workers and listeners may take to close, all side by side:
 * a worker's grace, then a second for the queues behind it. A queue's own close waits on its
 * Redis connection as a worker's does, so with Redis frozen it would otherwise hold the process
 * until the forced exit (exit code 1) instead of a clean stop.
 */
export const QUEUES_CLOSE_GRACE_MS = WORKER_CLOSE_GRACE_MS + 1_000;

/**
 * Closes each part side by side. A part that fails, or is still closing after `graceMs`, is
 * logged and left behind: it waits on a Redis or Postgres that is gone, and its connections go
 * with the process. Work it held is safe to abandon (a write's receipt makes a redelivery replay
 * it), so a stop with a server down is still a clean one.
 */
export async function closeParts(
  parts: Record<string, () => Promise<unknown>>,
  logger: Logger,
  graceMs = QUEUES_CLOSE_GRACE_MS,
): Promise<void> {
  const open = new Set(Object.keys(parts));
  const closing = Object.entries(parts).map(async ([part, close]) => {
    try {
      await close();
    } catch (error) {
      logger.warn({ err: error, part }, 'close failed; left behind');
    } finally {
      open.delete(part);
    }
  });
  if ((await within(Promise.all(closing), graceMs, () => 'late' as const)) === 'late') {
    logger.warn({ parts: [...open], graceMs }, 'did not close in time; left behind');
  }
}

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
