import { sql } from 'slonik';
import type { CommandContext } from '../commands/command.js';
import type { RecordCheck } from '../commands/resourceCommands.js';
import type { FieldError, FieldErrorCode } from '../errors.js';

type ReferencedTable = 'users' | 'funds' | 'donors' | 'award_cycles' | 'students' | 'scholarships';

/** How a reference to each table is named in messages. */
const nouns: Record<ReferencedTable, string> = {
  users: 'user',
  funds: 'fund',
  donors: 'donor',
  award_cycles: 'award cycle',
  students: 'student',
  scholarships: 'scholarship',
};

/**
 * The statuses that make a record unusable as a new reference, and what that is called, for the
 * tables where status matters (product.md §4): a deactivated user, a closed fund or a retired
 * scholarship is `reference_inactive`; an award needs a cycle that is open or closed, so a draft
 * or archived one is `invalid_value`.
 */
const unusable: Partial<
  Record<ReferencedTable, { statuses: readonly string[]; code: FieldErrorCode }>
> = {
  users: { statuses: ['deactivated'], code: 'reference_inactive' },
  funds: { statuses: ['closed'], code: 'reference_inactive' },
  scholarships: { statuses: ['retired'], code: 'reference_inactive' },
  award_cycles: { statuses: ['draft', 'archived'], code: 'invalid_value' },
};

/**
 * A reference must name a record of the caller's institution (else `reference_not_found`, the
 * same answer for missing and foreign) that is still in use (else `reference_inactive`, or
 * `invalid_value` for an award cycle that takes no awards).
 */
export async function checkReference(
  ctx: CommandContext,
  table: ReferencedTable,
  id: number,
  param: string,
): Promise<FieldError | null> {
  // A real write holds the referenced row until it commits, so a concurrent deactivation or
  // delete waits for it (a read-only dry run cannot lock, and needs no lock).
  const lock = ctx.dryRun ? sql.fragment`` : sql.fragment`FOR KEY SHARE`;
  const rule = unusable[table];
  const status = await ctx.db.maybeOneFirst(sql.unsafe`
    SELECT ${rule ? sql.fragment`status` : sql.fragment`'active'`} AS status
    FROM ${sql.identifier([table])}
    WHERE institution_id = ${ctx.institution.id} AND id = ${id} ${lock}`);
  if (status === null)
    return {
      param,
      code: 'reference_not_found',
      message: `does not name an existing ${nouns[table]}`,
    };
  if (rule?.statuses.includes(String(status))) {
    return {
      param,
      code: rule.code,
      message: `names ${table === 'award_cycles' ? 'an' : 'a'} ${nouns[table]} that is ${String(status)}`,
    };
  }
  return null;
}

/**
 * A value unique within an institution, compared as its unique index compares it: emails, cycle
 * names and student numbers case-insensitively (indexed on lower()), fund codes exactly.
 */
export interface UniqueValue {
  table: string;
  column: string;
  ignoreCase: boolean;
  /** Who else may hold it, for the message (`is already used by another donor`). */
  what: string;
}

/** Whether another record of the institution already holds this value (the record itself aside). */
export function isTaken(
  ctx: CommandContext,
  unique: UniqueValue,
  value: string,
  exceptId: number | null,
): Promise<boolean> {
  const held = sql.identifier([unique.column]);
  const matches = unique.ignoreCase
    ? sql.fragment`lower(${held}) = lower(${value})`
    : sql.fragment`${held} = ${value}`;
  return ctx.db.exists(sql.unsafe`
    SELECT 1 FROM ${sql.identifier([unique.table])}
    WHERE institution_id = ${ctx.institution.id} AND ${matches} AND id IS DISTINCT FROM ${exceptId}`);
}

export const alreadyInUse = (param: string, what: string): FieldError => ({
  param,
  code: 'already_in_use',
  message: `is already used by another ${what}`,
});

/** A field sent with a valid value that another record of the institution holds: already_in_use. */
export async function checkUnique(
  ctx: CommandContext,
  check: RecordCheck<{ id: number }>,
  unique: UniqueValue,
): Promise<void> {
  const param = unique.column;
  if (!check.validation.sent.has(param) || !check.valid(param)) return;
  const value = String(check.record[param]);
  if (await isTaken(ctx, unique, value, check.existing?.id ?? null)) {
    check.validation.errors.push(alreadyInUse(param, unique.what));
  }
}
