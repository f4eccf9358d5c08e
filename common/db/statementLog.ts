import type { Interceptor } from 'slonik';

/**
 * Every statement the service sends, offered to one listener: the tenant audit
 * (test/statementAudit.test.ts) records them to prove each names the institution. Off (no
 * listener) in production, where it costs one function call per statement.
 */
let listener: ((statement: string) => void) | null = null;

export function listenToStatements(next: ((statement: string) => void) | null): void {
  listener = next;
}

export const statementLog: Interceptor = {
  name: 'statement-log',
  beforeQueryExecution(_context, query) {
    listener?.(query.sql);
    return null;
  },
};
