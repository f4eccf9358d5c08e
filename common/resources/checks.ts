import { sql, type CommonQueryMethods } from 'slonik';
import type { CommandContext } from '../commands/command.js';
import type { FieldError } from '../errors.js';

type ReferencedTable = 'users' | 'funds' | 'donors';

/** The table's status that makes a record unusable as a new reference, where it has one. */
const inactiveStatus: Partial<Record<ReferencedTable, string>> = {
  users: 'deactivated',
  funds: 'closed',
};

/**
 * A reference must name a record of the caller's institution (else `reference_not_found`, the
 * same answer for missing and foreign) that is still in use (else `reference_inactive`).
 */
export async function checkReference(
  ctx: CommandContext,
  table: ReferencedTable,
  id: number,
  param: string,
): Promise<FieldError | null> {
  // A real write holds the referenced row until it commits, so a concurrent deactivation or
  // delete waits for it (a read-only dry run cannot lock, and needs no lock).
  const lock = ctx.dryRun ? sql.fragment`` : sql.fragment`FOR SHARE`;
  const status = await ctx.db.maybeOneFirst(sql.unsafe`
    SELECT ${table === 'donors' ? sql.fragment`'active'` : sql.fragment`status`} AS status
    FROM ${sql.identifier([table])}
    WHERE institution_id = ${ctx.institution.id} AND id = ${id} ${lock}`);
  if (status === null)
    return {
      param,
      code: 'reference_not_found',
      message: `does not name an existing ${table.slice(0, -1)}`,
    };
  if (status === inactiveStatus[table]) {
    return {
      param,
      code: 'reference_inactive',
      message: `names a ${table.slice(0, -1)} that is ${status}`,
    };
  }
  return null;
}

/** Case-insensitive uniqueness of an email within an institution, ignoring the record itself. */
export async function isEmailTaken(
  db: CommonQueryMethods,
  table: 'users' | 'donors',
  institutionId: number,
  email: string,
  exceptId: number | null,
): Promise<boolean> {
  return db.exists(sql.unsafe`
    SELECT 1 FROM ${sql.identifier([table])}
    WHERE institution_id = ${institutionId} AND lower(email) = lower(${email})
      AND id IS DISTINCT FROM ${exceptId}`);
}

export const alreadyInUse = (param: string, what: string): FieldError => ({
  param,
  code: 'already_in_use',
  message: `is already used by another ${what}`,
});
