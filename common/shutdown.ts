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
