import {
  BackendTerminatedError,
  BackendTerminatedUnexpectedlyError,
  ConnectionError,
} from 'slonik';

const networkCodes = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
// Postgres: admin shutdown, crash shutdown, cannot connect now, too many connections.
const unavailableSqlStates = new Set([
  '57P01',
  '57P02',
  '57P03',
  '53300',
  '08000',
  '08003',
  '08006',
]);

/** True when an error means Postgres or Redis is out of reach, not that the request was wrong. */
export function isUnavailableError(error: unknown): boolean {
  if (
    error instanceof ConnectionError ||
    error instanceof BackendTerminatedError ||
    error instanceof BackendTerminatedUnexpectedlyError
  ) {
    return true;
  }
  let current: unknown = error;
  for (let depth = 0; current && depth < 5; depth += 1) {
    const candidate = current as {
      code?: unknown;
      message?: unknown;
      cause?: unknown;
      name?: unknown;
    };
    if (candidate.name === 'MaxRetriesPerRequestError') return true;
    if (typeof candidate.code === 'string') {
      if (networkCodes.has(candidate.code) || unavailableSqlStates.has(candidate.code)) return true;
    }
    if (typeof candidate.message === 'string') {
      const message = candidate.message;
      if (
        message.includes("Stream isn't writeable") ||
        message.includes('Connection is closed') ||
        message.includes('Connection terminated') ||
        message.includes('timeout exceeded when trying to connect') ||
        // ioredis: no answer within commandTimeout, or the connection dropped with the command.
        message.includes('Command timed out') ||
        message.includes('max retries per request') ||
        // ioredis Cluster: a slot whose master is down, or a cluster not reachable at all.
        message.includes('CLUSTERDOWN') ||
        message.includes('Too many Cluster redirections') ||
        message.includes('Failed to refresh slots cache') ||
        message.includes("Cluster isn't ready")
      ) {
        return true;
      }
    }
    current = candidate.cause;
  }
  return false;
}
