import { pino, type Logger } from 'pino';

export type { Logger };

/**
 * JSON lines on stdout for processes; the operator CLI passes stderr so stdout stays data, and
 * the tests a file path (TEST_ERROR_LOG) so that CI can show what a failed test's service logged.
 */
export function createLogger(level: string, destination: 1 | 2 | string = 1): Logger {
  return pino(
    {
      level,
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    typeof destination === 'string'
      ? pino.destination({ dest: destination, append: true, sync: true })
      : pino.destination({ fd: destination, sync: destination === 2 }),
  );
}
