import type { Logger } from './logger.js';

/** SIGTERM/SIGINT: stop taking work, finish what is in flight, close connections, exit. */
export function onShutdown(
  logger: Logger,
  name: string,
  close: () => Promise<void>,
  graceMs = 30_000,
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
