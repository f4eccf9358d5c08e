import { createPool, type DatabasePool } from 'slonik';
import type { DriverTypeParser } from 'slonik';
import { statementLog } from './statementLog.js';

export type { DatabasePool };

/**
 * Type parsers chosen for money and JSON: ids are plain numbers (bigint cannot be serialised),
 * money stays an exact decimal string until it is presented, dates stay the text that was
 * stored, and timestamps become ISO 8601 strings in UTC.
 */
const typeParsers: DriverTypeParser[] = [
  { name: 'int8', parse: (value) => Number(value) },
  { name: 'numeric', parse: (value) => value },
  { name: 'date', parse: (value) => value },
  { name: 'timestamptz', parse: (value) => timestampToIso(value) },
];

/** `2026-11-21 10:00:00.5+00`: how Postgres writes a timestamp in UTC (to the millisecond). */
const UTC_TIMESTAMP = /^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d)(?:\.(\d{1,3}))?\+00$/;

/**
 * A timestamptz as ISO 8601 in UTC to the millisecond. Lists read several per row, so the common
 * form (a session in UTC) is rewritten as text; any other offset goes through Date.
 */
export function timestampToIso(value: string): string {
  const utc = UTC_TIMESTAMP.exec(value);
  if (utc) return `${utc[1]}T${utc[2]}.${(utc[3] ?? '').padEnd(3, '0')}Z`;
  return new Date(value.replace(' ', 'T').replace(/([+-]\d\d)$/, '$1:00')).toISOString();
}

export interface PoolOptions {
  maxPoolSize: number;
  applicationName: string;
}

export async function createDatabasePool(url: string, options: PoolOptions): Promise<DatabasePool> {
  const connectionUri = new URL(url);
  connectionUri.searchParams.set('application_name', options.applicationName);
  const pool = await createPool(connectionUri.toString(), {
    typeParsers,
    interceptors: [statementLog],
    maxPoolSize: options.maxPoolSize,
    // Fail fast when Postgres is unreachable so that callers can answer 503 instead of hanging.
    connectionTimeout: 2_000,
    connectionRetryLimit: 1,
    statementTimeout: 15_000,
    idleInTransactionSessionTimeout: 30_000,
    captureStackTrace: false,
    // Slonik's default sends DISCARD ALL whenever a connection goes back to the pool: one more
    // round trip per query or transaction. Nothing here leaves session state behind (the only
    // SETs are transaction-scoped), so there is nothing to discard.
    resetConnection: async () => {},
  });
  // Slonik also emits every failed query on the pool; without a listener Node would replace the
  // typed error (a unique violation, say) by ERR_UNHANDLED_ERROR. Callers get the error anyway.
  pool.on('error', () => {});
  return pool;
}
