import { pino, type DestinationStream, type Logger } from 'pino';

export type { Logger };

/**
 * What may hold personal data and so never reaches a log line as it is (trust.md §4): request
 * and response bodies, queries, keys and headers, and what a database error carries of the row
 * it refused (node-postgres puts the values in `detail`; slonik keeps the statement's values and
 * the driver's error beside its own). The request log writes route templates and query parameter
 * names (api/middleware/requestLog.ts), so these are the second line of defence.
 */
export const redactedPaths = [
  'body',
  '*.body',
  'query',
  '*.query',
  'url',
  '*.url',
  'headers',
  '*.headers',
  'key',
  '*.key',
  'email',
  '*.email',
  'err.detail',
  'err.values',
  'err.sql',
  'err.where',
  'err.cause.detail',
  'err.cause.values',
  'err.cause.where',
  'err.originalError.detail',
  'err.originalError.where',
  'err.error.detail',
  'job.data',
  '*.job.data',
];

/**
 * JSON lines on stdout for processes; the operator CLI passes stderr so stdout stays data; a
 * test may pass a stream of its own, or a file path (TEST_ERROR_LOG, so that CI can show what a
 * failed test's service logged).
 */
export function createLogger(
  level: string,
  destination: 1 | 2 | string | DestinationStream = 1,
): Logger {
  return pino(
    {
      level,
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: redactedPaths, censor: '[redacted]' },
    },
    typeof destination === 'number'
      ? pino.destination({ fd: destination, sync: destination === 2 })
      : typeof destination === 'string'
        ? pino.destination({ dest: destination, append: true, sync: true })
        : destination,
  );
}
