import { pino, type Logger } from 'pino';

export type { Logger };

/** JSON lines on stdout for processes; the operator CLI passes stderr so stdout stays data. */
export function createLogger(level: string, destination: 1 | 2 = 1): Logger {
  return pino(
    {
      level,
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    pino.destination({ fd: destination, sync: destination === 2 }),
  );
}
