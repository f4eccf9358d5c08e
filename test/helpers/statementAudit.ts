import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';

/**
 * The rule both statement audits apply (test/statementAudit.test.ts over one filled institution,
 * test/audit/suiteStatements.test.ts over a whole suite run): every statement the service sends
 * that touches a tenant table names `institution_id`, the distribution column of a sharded
 * database and the guard against one tenant's request reading another's.
 *
 * The statements that deliberately span institutions, each with its reason. Anything else that
 * touches a tenant table without naming `institution_id` fails the audit.
 */
export const crossTenant: readonly { pattern: RegExp; reason: string }[] = [
  {
    pattern:
      /DELETE FROM write_receipts\s+WHERE ctid IN \(SELECT ctid FROM write_receipts WHERE expires_at/,
    reason: 'maintenance: expired idempotency receipts of every institution',
  },
  { pattern: /DELETE FROM events/, reason: 'maintenance: events past their retention' },
  {
    pattern: /DELETE FROM webhook_(delivery_attempts|deliveries) WHERE ctid IN/,
    reason: 'maintenance: webhook deliveries and attempts past the events’ retention',
  },
  {
    pattern: /FROM events e, webhook_dispatch_cursor c/,
    reason: 'metrics: the age of the oldest event not yet dispatched, over every institution',
  },
  {
    pattern:
      /SELECT institution_id, (id, secret, previous_secret FROM webhook_endpoints|source, key, response_body, sealed_fields FROM write_receipts)/,
    reason:
      'worker start: stored secrets in clear or under a previous key, of every institution, sealed again under SECRETS_KEY (each row then updated by its institution_id)',
  },
  {
    pattern: /UPDATE api_keys SET revoked_at = coalesce\(revoked_at, now\(\)\) WHERE id = \$1/,
    reason:
      'operator CLI `admin revoke-key --id`: a key id is unique across institutions, and the operator names only the key',
  },
];

/** The tables that hold an `institution_id` column. */
export async function tenantTables(db: CommonQueryMethods): Promise<string[]> {
  return (
    await db.anyFirst(sql.type(z.object({ table_name: z.string() }))`
      SELECT DISTINCT table_name FROM information_schema.columns
      WHERE table_schema = 'public' AND column_name = 'institution_id'`)
  ).map(String);
}

/** Whether a statement reads or writes one of `tables`. */
export function touchesAny(statement: string, tables: readonly string[]): boolean {
  return tables.some((table) =>
    new RegExp(`\\b(FROM|JOIN|INTO|UPDATE)\\s+"?${table}"?\\b`, 'i').test(statement),
  );
}

/** The statements that touch a tenant table, name no institution and are not a known exception. */
export function unscopedStatements(
  statements: Iterable<string>,
  tables: readonly string[],
): string[] {
  return [...statements].filter(
    (statement) =>
      touchesAny(statement, tables) &&
      !/institution_id/.test(statement) &&
      !crossTenant.some(({ pattern }) => pattern.test(statement)),
  );
}
